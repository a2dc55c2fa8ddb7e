import { createHash } from 'node:crypto';
import { Binary } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { bsonTypeName } from '../bson/compare.js';
import { KILL_ALL, patternFromBSON, type KillAllSessionsByPattern } from '../sessions/kill_sessions.js';
import type { LogicalSessionCache } from '../sessions/logical_session_cache.js';
import { LOGICAL_SESSION_TIMEOUT_MINUTES, sessionIdFromClient, type LogicalSessionId } from '../sessions/session_id.js';

// The logical session commands' arguments and startSession's reply, as mongod and mongos read and
// answer them (start_session_command.cpp, refresh_sessions_command.cpp, end_sessions_command.cpp,
// kill_sessions_command.cpp, kill_all_sessions_command.cpp,
// kill_all_sessions_by_pattern_command.cpp): a node's commands are in
// mongod_commands/sessions/session_commands.ts, a router's in router/commands/cluster_sessions.ts.

export function startSession(cache: LogicalSessionCache, nowMs: number): Doc {
  const lsid = cache.startSession(nowMs);
  return { id: { id: lsid.id }, timeoutMinutes: LOGICAL_SESSION_TIMEOUT_MINUTES, ok: 1 };
}

// refreshSessions and endSessions name their sessions in their first field.
export function sessionsArgument(name: 'refreshSessions' | 'endSessions', cmd: Doc): LogicalSessionId[] {
  const field = `${name}.${name}`;
  return arrayOf(cmd[name], field).map((v) => sessionIdFromClient(v, field));
}

// The sessions a kill command names, as patterns (kill_sessions.cpp). killSessions: [] and
// killAllSessions: [] kill every session of the logged-in user, that is every session without
// authentication; killAllSessions' users are named by the SHA-256 of "user@db", as their uid.
export function killPatterns(name: KillCommandName, cmd: Doc): KillAllSessionsByPattern[] {
  switch (name) {
    case 'killSessions': {
      const field = 'KillSessionsCmdFromClient.killSessions';
      const lsids = arrayOf(cmd.killSessions, field).map((v) => sessionIdFromClient(v, field));
      return lsids.length === 0 ? [KILL_ALL] : lsids.map((lsid) => ({ ...KILL_ALL, lsid }));
    }
    case 'killAllSessions': {
      const users = arrayOf(cmd.killAllSessions, 'KillAllSessionsCmd.killAllSessions').map(userOf);
      return users.length === 0 ? [KILL_ALL] : users.map((user) => ({ ...KILL_ALL, uid: userDigest(user) }));
    }
    case 'killAllSessionsByPattern': {
      const field = 'KillAllSessionsByPatternCmd.killAllSessionsByPattern';
      const patterns = arrayOf(cmd.killAllSessionsByPattern, field).map((v) => patternFromBSON(v, field));
      return patterns.length === 0 ? [KILL_ALL] : patterns;
    }
  }
}

export type KillCommandName = 'killSessions' | 'killAllSessions' | 'killAllSessionsByPattern';

export const KILL_COMMAND_NAMES: readonly KillCommandName[] = ['killSessions', 'killAllSessions', 'killAllSessionsByPattern'];

function arrayOf(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type '${bsonTypeName(value)}', expected type 'array'`);
  return value;
}

function userOf(value: unknown): { user: string; db: string } {
  if (!isPlainObject(value) || typeof value.user !== 'string' || typeof value.db !== 'string') {
    throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'KillAllSessionsCmd.killAllSessions' elements must be {user: string, db: string}");
  }
  return { user: value.user, db: value.db };
}

function userDigest(user: { user: string; db: string }): Binary {
  return new Binary(createHash('sha256').update(`${user.user}@${user.db}`).digest(), 0);
}
