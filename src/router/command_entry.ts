import type { Doc } from '../bson/values.js';
import { sequenceBytes } from '../commands/original_bytes.js';
import { parseMaxTimeMS } from '../query/query_request_helper.js';
import { checkOperationSessionInfo, checkRetryableWriteCommand } from '../sessions/operation_session_info.js';
import type { RouterServices } from './router_services.js';

// What every routed command goes through, whichever path answers it: the general path
// (router_dispatcher.ts, on the decoded command) and the fast paths (fast_paths.ts, on the bytes)
// both call these, so each concern that applies to every command is written once: its session
// fields (checked, the session touched, and which of them its shards are sent), its maxTimeMS
// (read into a deadline) and mongos's operation counters; cluster time and authentication belong
// here too. A fast path only plans commands whose every field these can judge from its bytes; a
// command with anything else (autocommit, maxTimeMS, a write concern) is outside its shape and
// takes the general path.

// The generic arguments read here: a decoded command's own, or those a fast path read from its
// bytes, the lsid left in its bytes.
export type GenericArguments = { lsid?: unknown; txnNumber?: unknown; autocommit?: unknown; startTransaction?: unknown; maxTimeMS?: unknown };

// Throws what mongos answers a command's session fields or maxTimeMS with (a transaction's
// statements are refused until there are transactions, a txnNumber on anything but a retryable
// write with 50768); touches its session; returns its deadline
// (performance.now()'s clock) when it has a maxTimeMS. Idempotent but for the deadline: a fast
// path that falls back to the general path has it called twice.
export function enterCommand(router: RouterServices, name: string, args: GenericArguments): number | undefined {
  checkOperationSessionInfo(args);
  checkRetryableWriteCommand(name, args);
  const maxTimeMS = parseMaxTimeMS(args.maxTimeMS);
  const { lsid } = args;
  if (Buffer.isBuffer(lsid)) router.sessions.touchBytes(lsid, Date.now());
  else if (lsid !== undefined) router.sessions.touch(lsid, Date.now());
  // As mongos applies it: the shards get maxTimeMS with the command and stop their own work in
  // time; the router answers MaxTimeMSExpired when the whole command, its retries and merges
  // included, takes longer. getMore's maxTimeMS is an awaitData cursor's wait, not a deadline.
  return maxTimeMS === 0 || name === 'getMore' ? undefined : performance.now() + maxTimeMS;
}

// Whether a command's shards are sent its lsid and txnNumber, as mongos passes them on: a
// retryable write's are (its shards run each of its statements once by them, and judge a shard
// key change by them); a read's and those of any other write stay with the router.
export function forwardsSession(write: boolean, args: GenericArguments): boolean {
  return write && args.txnNumber !== undefined;
}

export type OpCounters = Record<'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command', number>;

export type WriteKind = 'insert' | 'update' | 'delete';

export function isWriteCommand(name: string): name is WriteKind {
  return name === 'insert' || name === 'update' || name === 'delete';
}

// serverStatus's opcounters as mongos counts them: find as a query and getMore as a getmore when
// they start, writes by their statements once answered (countWriteAttempts), any other command as
// a command.
export function countCommand(counters: OpCounters, name: string): void {
  if (name === 'find') counters.query += 1;
  else if (name === 'getMore') counters.getmore += 1;
  else if (!isWriteCommand(name)) counters.command += 1;
}

// A write's statements that were attempted, from the router's reply, as mongos counts them: none
// when the command failed; up to and including the first failed one when ordered; else all.
export function countWriteAttempts(counters: OpCounters, kind: WriteKind, statements: number, ordered: boolean, reply: Doc): void {
  const errors = reply.writeErrors;
  let attempts = statements;
  if (reply.ok !== 1) attempts = 0;
  else if (ordered && Array.isArray(errors) && errors.length > 0) attempts = Number((errors[0] as Doc).index) + 1;
  counters[kind] += attempts;
}

const STATEMENTS: Record<WriteKind, string> = { insert: 'documents', update: 'updates', delete: 'deletes' };

// countWriteAttempts for a decoded write command (the general path) and its reply.
export function countWriteReply(counters: OpCounters, kind: WriteKind, cmd: Doc, reply: Doc): void {
  const field = STATEMENTS[kind];
  // Counted without decoding a document sequence the command left undecoded.
  const statements = sequenceBytes(cmd, field)?.length ?? (Array.isArray(cmd[field]) ? (cmd[field] as unknown[]).length : 0);
  countWriteAttempts(counters, kind, statements, cmd.ordered !== false, reply);
}
