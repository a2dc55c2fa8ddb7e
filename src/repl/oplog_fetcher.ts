import { learnCommitPoint } from './commit_point_update.js';
import { rescheduleElectionTimeout } from './election_timer.js';
import type { Effects } from './effects.js';
import type { OplogFetch, OplogFetchResponse } from './messages.js';
import { entryOpTime, type OplogEntry } from './oplog_entry.js';
import { compareOpTime, NULL_OP_TIME, opTimeEquals } from './op_time.js';
import { denylistSource, leaveSource, noteSource, setMemberState, sourceMetadata } from './fetch_state.js';
import { startRollback } from './rollback.js';
import { checkCatchUp, finishCatchUp } from './primary.js';
import { reportPositionUpstream } from './positions.js';
import { chooseNewSyncSource, shouldChangeSyncSource } from './sync_source.js';
import { reachesBack, sourceTooStale, syncSourceView } from './too_stale.js';
import { lastAppliedOpTime, selfConfig, type TopologyState } from './topology_state.js';
import { isUp } from './member_data.js';
import { isReadable } from './member_state.js';
import { replSetSettings } from './repl_set_config.js';

// Entries per reply, what a getMore's batch holds.
const OPLOG_FETCH_BATCH_LIMIT = 50;
// How long a getMore that found nothing waits before the fetcher asks again (awaitData).
const OPLOG_FETCH_AWAIT_DATA_MS = 500;
// A query unanswered this long is given up and the source chosen again.
const OPLOG_FETCH_TIMEOUT_MS = 5000;

// Who pulls: data-bearing followers, and a new primary while it catches up.
export function fetchingAllowed(s: TopologyState): boolean {
  if (selfConfig(s).arbiterOnly || s.memberState === 'REMOVED') return false;
  if (s.role === 'leader') return s.leader?.catchUp !== null && s.leader?.catchUp !== undefined;
  return s.role === 'follower';
}

// Called after every event: keeps a sync source (leaving one that is behind, gone or too stale),
// and asks it for what follows our last entry when the previous answer is in and the wait is over.
export function runFetcher(s: TopologyState, fx: Effects): TopologyState {
  if (!fetchingAllowed(s)) return s.fetch.syncSourceIndex === null && s.fetch.inFlight === null ? s : leaveSource(s);
  const { inFlight } = s.fetch;
  if (inFlight !== null) {
    if (s.nowMs - inFlight.sentAtMs < OPLOG_FETCH_TIMEOUT_MS) return s;
    const left = leaveSource(s);
    return inFlight.kind === 'rollbackFetch' ? setMemberState(left, fx, 'SECONDARY') : left;
  }
  let source = s.fetch.syncSourceIndex;
  if (source !== null && shouldChangeSyncSource(syncSourceView(s), source, s.members[source]!.appliedOpTime) !== null) source = null;
  if (source === null && s.fetch.requestedSourceIndex !== null) {
    const requested = s.fetch.requestedSourceIndex;
    const m = s.members[requested]!;
    if (m.state !== null && isReadable(m.state) && isUp(m, s.nowMs, replSetSettings(s.config).electionTimeoutMillis)) source = requested;
    else s = { ...s, fetch: { ...s.fetch, requestedSourceIndex: null } };
  }
  source ??= chooseNewSyncSource(syncSourceView(s));
  if (source === null) return s.fetch.syncSourceIndex === null ? s : leaveSource(s);
  if (source !== s.fetch.syncSourceIndex) s = { ...s, fetch: { ...s.fetch, syncSourceIndex: source, nextFetchAtMs: s.nowMs } };
  if (s.nowMs < s.fetch.nextFetchAtMs) return s;
  const request: OplogFetch = { kind: 'oplogFetch', lastFetched: lastAppliedOpTime(s), term: s.term };
  fx.send(source, request);
  return { ...s, fetch: { ...s.fetch, inFlight: { kind: 'oplogFetch', sentAtMs: s.nowMs } } };
}

// TopologyCoordinator::setForceSyncSourceIndex: the current source is left, and `memberIndex` is
// the next chosen if it is then up and readable (MongoDB's replSetSyncFrom); like any source, it
// is left once its own answers show it behind us.
// A rollback under way finishes with its source first.
export function requestSyncSource(s: TopologyState, memberIndex: number): TopologyState {
  const left = s.fetch.syncSourceIndex === memberIndex || s.fetch.inFlight?.kind === 'rollbackFetch' ? s : leaveSource(s);
  return { ...left, fetch: { ...left.fetch, requestedSourceIndex: memberIndex } };
}

export function fetcherWakeMs(s: TopologyState): number {
  const { inFlight, syncSourceIndex, nextFetchAtMs } = s.fetch;
  if (inFlight !== null) return inFlight.sentAtMs + OPLOG_FETCH_TIMEOUT_MS;
  return syncSourceIndex !== null && fetchingAllowed(s) ? nextFetchAtMs : Number.POSITIVE_INFINITY;
}

// The source's side: the entries after `lastFetched` if it holds that entry (an empty oplog is
// read from its start), OplogStartMissing with where its oplog begins if it does not.
export function answerOplogFetch(s: TopologyState, fx: Effects, from: number, req: OplogFetch): void {
  const fromStart = opTimeEquals(req.lastFetched, NULL_OP_TIME);
  const at = fromStart ? -1 : s.oplog.findIndex((e) => opTimeEquals(entryOpTime(e), req.lastFetched));
  const oldest = s.oplog[0];
  const response: OplogFetchResponse = !fromStart && at < 0
    ? { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: sourceMetadata(s), oldestOpTime: oldest === undefined ? null : entryOpTime(oldest) }
    : { kind: 'oplogFetchResponse', status: 'ok', entries: s.oplog.slice(at + 1, at + 1 + OPLOG_FETCH_BATCH_LIMIT), metadata: sourceMetadata(s) };
  fx.send(from, response);
}

// Entries in strictly rising optime order, all after our last one; anything else is not applied.
function wellFormedBatch(s: TopologyState, entries: readonly OplogEntry[]): boolean {
  let prev = lastAppliedOpTime(s);
  for (const e of entries) {
    if (compareOpTime(entryOpTime(e), prev) <= 0) return false;
    prev = entryOpTime(e);
  }
  return true;
}

export function onOplogFetchResponse(s: TopologyState, fx: Effects, from: number, r: OplogFetchResponse): TopologyState {
  if (s.fetch.syncSourceIndex !== from || s.fetch.inFlight?.kind !== 'oplogFetch') return s;
  let next = noteSource({ ...s, fetch: { ...s.fetch, inFlight: null } }, fx, from, r.metadata);
  if (!fetchingAllowed(next)) return next;
  if (r.status === 'OplogStartMissing') {
    // A new primary does not roll back: it stops catching up and writes its no-op.
    if (next.role === 'leader') return finishCatchUp(leaveSource(next), fx);
    // MongoDB's InvalidSyncSource: a source not ahead of us lacks our last entry because it is
    // behind, not because we diverged; rolling back to it would undo entries it has yet to get.
    if (compareOpTime(r.metadata.lastOpApplied, lastAppliedOpTime(next)) <= 0) return denylistSource(next, from);
    if (!reachesBack(r.oldestOpTime, next)) return sourceTooStale(next, fx, from, r.oldestOpTime);
    return startRollback(next, fx, from, r.metadata);
  }
  if (!wellFormedBatch(next, r.entries)) return denylistSource(next, from);
  if (r.entries.length > 0) {
    fx.add({ type: 'appendOplog', entries: r.entries });
    next = { ...next, oplog: [...next.oplog, ...r.entries] };
  }
  if (next.memberState === 'STARTUP2' && r.entries.length < OPLOG_FETCH_BATCH_LIMIT) {
    next = rescheduleElectionTimeout(setMemberState(next, fx, 'SECONDARY'));
  }
  next = next.role === 'leader' ? checkCatchUp(next, fx) : learnCommitPoint(next, fx, r.metadata.lastOpCommitted);
  if (r.entries.length > 0) reportPositionUpstream(next, fx);
  const waitMs = r.entries.length > 0 ? 0 : OPLOG_FETCH_AWAIT_DATA_MS;
  if (next.fetch.syncSourceIndex === null) return next;
  return { ...next, fetch: { ...next.fetch, nextFetchAtMs: next.nowMs + waitMs } };
}
