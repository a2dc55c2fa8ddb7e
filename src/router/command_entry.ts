import type { Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { appendClusterAndOperationTime } from '../command_layer/operation_time.js';
import { sequenceBytes } from '../command_layer/original_bytes.js';
import { parseMaxTimeMS } from '../query/query_request_helper.js';
import { clusterTimeOf, clusterTimeOfBytes } from '../sessions/logical_time_metadata.js';
import { checkOperationSessionInfo, checkRetryableWriteCommand } from '../sessions/operation_session_info.js';
import { afterClusterTimeOf, checkAfterClusterTimeAllowed, snapshotReadOf } from '../sessions/read_concern_args.js';
import { isPlainObject } from '../bson/values.js';
import type { RouterServices } from './router_services.js';

// What every routed command goes through, whichever path answers it: the general path
// (router_dispatcher.ts, on the decoded command) and the fast paths (fast_paths.ts, on the bytes)
// both call these, so each concern that applies to every command is written once: its
// $clusterTime (taken into the router's clock), its session fields (checked, the session touched,
// and which of them its shards are sent), its maxTimeMS (read into a deadline), mongos's operation
// counters and the times on its reply; authentication belongs here too. A fast path only plans
// commands whose every field these can judge from its bytes; a command with anything else
// (autocommit, maxTimeMS, a write concern) is outside its shape and takes the general path.

// The generic arguments read here: a decoded command's own, or those a fast path read from its
// bytes, the lsid and $clusterTime left in their bytes.
export type GenericArguments = { lsid?: unknown; txnNumber?: unknown; autocommit?: unknown; startTransaction?: unknown; maxTimeMS?: unknown; $clusterTime?: unknown; readConcern?: unknown };

// Throws what mongos answers a command's $clusterTime, readConcern, session fields or maxTimeMS
// with (a time too far ahead fails the clock's rate limiter; a snapshot read without an
// atClusterTime is given the router's cluster time as one, so that every shard reads the same
// snapshot, as mongos picks it; an afterClusterTime is parsed here,
// refused on getMore, and waited for by the shards; a transaction's statements are refused until
// there are transactions, a txnNumber on anything but a retryable write with 50768); touches its
// session; returns its deadline (performance.now()'s clock) when it has a maxTimeMS. Idempotent
// but for the deadline: a fast path that falls back to the general path has it called twice.
export function enterCommand(router: RouterServices, name: string, args: GenericArguments): number | undefined {
  const sent = args.$clusterTime;
  if (sent !== undefined) router.clock.advance(Buffer.isBuffer(sent) ? clusterTimeOfBytes(sent) : clusterTimeOf(sent));
  // A transaction's statements read the transaction's snapshot (transaction_router.ts).
  const snapshot = isPlainObject(args.readConcern) && args.autocommit !== false ? snapshotReadOf(name, args.readConcern, router.clock.now()) : undefined;
  if (snapshot !== undefined && isPlainObject(args.readConcern)) args.readConcern = { ...args.readConcern, atClusterTime: snapshot.atClusterTime };
  if (afterClusterTimeOf(args.readConcern) !== undefined) checkAfterClusterTimeAllowed(name);
  checkOperationSessionInfo(args, true);
  checkRetryableWriteCommand(name, args);
  const maxTimeMS = parseMaxTimeMS(args.maxTimeMS);
  const { lsid } = args;
  if (Buffer.isBuffer(lsid)) router.sessions.touchBytes(lsid, router.wallClock.now());
  else if (lsid !== undefined) router.sessions.touch(lsid, router.wallClock.now());
  // As mongos applies it: the shards get maxTimeMS with the command and stop their own work in
  // time; the router answers MaxTimeMSExpired when the whole command, its retries and merges
  // included, takes longer. getMore's maxTimeMS is an awaitData cursor's wait, not a deadline.
  return maxTimeMS === 0 || name === 'getMore' ? undefined : performance.now() + maxTimeMS;
}

// A router reply as mongos's appendRequiredFieldsToResponse ends it: $clusterTime, the router's
// time, and operationTime. A fast path knows its one shard's operationTime and passes it on; the
// general path does not follow each shard's, and answers the router's time, which is at least
// every shard operationTime the command received (each reply's $clusterTime moved the clock
// past it), as mongos does when it does not know the operation's time.
export function withRouterTimes(router: RouterServices, reply: Doc, operationTime?: Timestamp): Doc {
  const now = router.clock.now();
  return appendClusterAndOperationTime(reply, now, operationTime ?? now);
}

// Whether a command's shards are sent its lsid and txnNumber, as mongos passes them on: a
// retryable write's are (its shards run each of its statements once by them, and judge a shard
// key change by them); a read's and those of any other write stay with the router.
export function forwardsSession(write: boolean, args: GenericArguments): boolean {
  return write && args.txnNumber !== undefined && args.autocommit === undefined;
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
