import os from 'node:os';
import type { CommandDefinition } from '../command.js';
import { SERVER_VERSION } from './build_info.js';

export const serverStatusCommand: CommandDefinition = {
  names: ['serverStatus'],
  run(ctx) {
    const { node } = ctx;
    const uptimeMs = Date.now() - node.startedAt.getTime();
    const mem = process.memoryUsage();
    return {
      host: `${os.hostname()}:${node.options.port}`,
      version: SERVER_VERSION,
      process: 'docshard',
      pid: process.pid,
      uptime: Math.floor(uptimeMs / 1000),
      uptimeMillis: uptimeMs,
      uptimeEstimate: Math.floor(uptimeMs / 1000),
      localTime: new Date(),
      connections: { current: node.counters.connectionsCurrent, available: 1_000_000, totalCreated: node.counters.connectionsTotal },
      opcounters: { ...node.counters.opcounters },
      mem: { bits: 64, resident: Math.round(mem.rss / 1024 / 1024), virtual: Math.round(mem.heapTotal / 1024 / 1024), supported: true },
      metrics: { cursor: { open: { total: node.cursors.openCount } } },
      storageEngine: { name: 'lmdb', supportsCommittedReads: true, persistent: true },
      ok: 1,
    };
  },
};
