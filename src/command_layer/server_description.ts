import os from 'node:os';
import type { Doc } from '../bson/values.js';
import { Limits } from '../wire/op_codes.js';
import { negotiateCompressors } from '../wire/message_compressor.js';
import { LOGICAL_SESSION_TIMEOUT_MINUTES } from '../sessions/session_id.js';
import { optionalStringArray } from './args.js';
import type { ConnectionInfo } from './connection_info.js';

// What a node and a router say of themselves alike: the handshake, the build, the machine and the
// command line.

export const SERVER_VERSION = '7.0.0';
export const MAX_WIRE_VERSION = 21; // MongoDB 7.0

// Shared by nodes and routers (a router adds `msg: "isdbgrid"`).
export function helloReply(conn: ConnectionInfo, cmd: Doc, nowMs: number): Doc {
  const isLegacy = 'isMaster' in cmd || 'ismaster' in cmd;
  if (cmd.client !== undefined && typeof cmd.client === 'object') conn.clientMetadata = cmd.client as Record<string, unknown>;
  // As mongod negotiates: a hello that lists compressors replaces the connection's choice, one
  // that lists none is told the last choice; `compression` is answered only when there is one.
  const compression = optionalStringArray(cmd, 'compression');
  if (compression !== undefined) conn.compressors = negotiateCompressors(compression);
  return {
    ...(isLegacy ? { ismaster: true } : { isWritablePrimary: true }),
    ...(cmd.helloOk === true ? { helloOk: true } : {}),
    maxBsonObjectSize: Limits.maxBsonObjectSize,
    maxMessageSizeBytes: Limits.maxMessageSizeBytes,
    maxWriteBatchSize: Limits.maxWriteBatchSize,
    localTime: new Date(nowMs),
    logicalSessionTimeoutMinutes: LOGICAL_SESSION_TIMEOUT_MINUTES,
    connectionId: conn.id,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ...(conn.compressors !== undefined && conn.compressors.length > 0 ? { compression: conn.compressors } : {}),
    ok: 1,
  };
}

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

// A node's and a router's answer alike: both describe the machine they run on.
export function hostInfoReply(nowMs: number): Record<string, unknown> {
  return {
    system: {
      currentTime: new Date(nowMs),
      hostname: os.hostname(),
      cpuAddrSize: 64,
      memSizeMB: Math.round(os.totalmem() / 1024 / 1024),
      numCores: os.cpus().length,
      cpuArch: process.arch,
    },
    os: { type: os.type(), name: os.platform(), version: os.release() },
    extra: {},
    ok: 1,
  };
}

// The command line the process was started with.
export function commandLine(): string[] {
  return ['docshard', ...process.argv.slice(2)];
}
