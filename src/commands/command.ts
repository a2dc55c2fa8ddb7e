import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { CursorManager } from './cursor_manager.js';
import type { FailPoints } from './fail_points.js';
import type { LogicalSessionCache } from '../sessions/logical_session_cache.js';

export interface NodeOptions {
  role: 'shard' | 'config';
  port: number;
  bindIp: string;
  dbpath: string;
  enableTestCommands: boolean;
}

export interface ServerCounters {
  connectionsCurrent: number;
  connectionsTotal: number;
  opcounters: Record<'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command', number>;
}

// Process-wide services a command may use; created by the composition root (src/process).
export interface NodeServices {
  options: NodeOptions;
  storage: StorageEngine;
  cursors: CursorManager;
  logger: Logger;
  startedAt: Date;
  counters: ServerCounters;
  recentLog: string[];
  failPoints: FailPoints;
  sessions: LogicalSessionCache;
  commands: ReadonlyMap<string, CommandDefinition>;
}

export interface ConnectionInfo {
  id: number;
  remote: string;
  local: string;
  clientMetadata?: Doc;
}

export interface CommandContext {
  node: NodeServices;
  conn: ConnectionInfo;
  db: string;
}

export interface CommandDefinition {
  // The canonical name first, then accepted aliases (e.g. isMaster, ismaster).
  names: readonly string[];
  help?: string;
  adminOnly?: boolean;
  testOnly?: boolean;
  run(ctx: CommandContext, cmd: Doc): Doc | Promise<Doc>;
}
