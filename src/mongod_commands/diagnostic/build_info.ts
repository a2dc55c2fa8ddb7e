import type { CommandDefinition } from '../command.js';
import { Limits } from '../../wire/op_codes.js';

export const SERVER_VERSION = '7.0.0';

export const buildInfoCommand: CommandDefinition = {
  names: ['buildInfo', 'buildinfo'],
  run: () => buildInfoReply(),
};

export function buildInfoReply(): Record<string, unknown> {
  return {
    version: SERVER_VERSION,
    gitVersion: 'docshard',
    modules: [],
    allocator: 'system',
    javascriptEngine: 'none',
    sysInfo: 'deprecated',
    versionArray: [7, 0, 0, 0],
    openssl: { running: 'disabled', compiled: 'disabled' },
    buildEnvironment: { distmod: 'docshard', target_os: process.platform, target_arch: process.arch },
    bits: 64,
    debug: false,
    maxBsonObjectSize: Limits.maxBsonObjectSize,
    storageEngines: ['lmdb'],
    ok: 1,
  };
}
