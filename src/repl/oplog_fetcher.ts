import { learnCommitPoint } from './commit_point_update.js';
import { rescheduleElectionTimeout } from './election_timer.js';
import type { Effects } from './effects.js';
import type { OplogFetch, OplogFetchResponse, RollbackFetch, RollbackFetchResponse, SourceMetadata } from './messages.js';
import { entryOpTime, type OplogEntry } from './oplog_entry.js';
import { compareOpTime, NULL_OP_TIME, opTimeEquals } from './op_time.js';
import { checkCatchUp, finishCatchUp } from './primary.js';
import { reportPositionUpstream } from './positions.js';
import { updateTerm } from './step_down.js';
import { chooseNewSyncSource, shouldChangeSyncSource, type SyncSourceView } from './sync_source.js';
import { lastAppliedOpTime, selfConfig, type TopologyState } from './topology_state.js';

// Entries per reply, what a getMore's batch holds.
const OPLOG_FETCH_BATCH_LIMIT = 50;
// How long a getMore that found nothing waits before the fetcher asks again (awaitData).
const OPLOG_FETCH_AWAIT_DATA_MS = 500;
// A query unanswered this long is given up and the source chosen again.
const OPLOG_FETCH_TIMEOUT_MS = 5000;
// How long a source that sent a malformed batch or shares no history with us is not chosen again.
const DENYLIST_MS = 10_000;

// Who pulls: data-bearing followers, and a new primary while it catches up.
export function fetchingAllowed(s: TopologyState): boolean {
  if (selfConfig(s).arbiterOnly) return false;
  if (s.role === 'leader') return s.leader?.catchUp !== null && s.leader?.catchUp !== undefined;
  return s.role === 'follower';
}

function view(s: TopologyState): SyncSourceView {
  return { config: s.config, selfIndex: s.selfIndex, members: s.members, lastAppliedOpTime: lastAppliedOpTime(s), nowMs: s.nowMs, denylist: s.fetch.denylist };
}

function leaveSource(s: TopologyState): TopologyState {
  return { ...s, fetch: { ...s.fetch, syncSourceIndex: null, inFlight: null, nextFetchAtMs: s.nowMs } };
}

function denylistSource(s: TopologyState, source: number): TopologyState {
  const left = leaveSource(s);
  return { ...left, fetch: { ...left.fetch, denylist: { ...left.fetch.denylist, [source]: s.nowMs + DENYLIST_MS } } };
}

function setMemberState(s: TopologyState, fx: Effects, state: TopologyState['memberState']): TopologyState {
  if (s.memberState === state) return s;
  fx.add({ type: 'memberStateChanged', state, term: s.term, writable: false });
  return { ...s, memberState: state };
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
  if (source !== null && shouldChangeSyncSource(view(s), source, s.members[source]!.appliedOpTime) !== null) source = null;
  source ??= chooseNewSyncSource(view(s));
  if (source === null) return s.fetch.syncSourceIndex === null ? s : leaveSource(s);
  if (source !== s.fetch.syncSourceIndex) s = { ...s, fetch: { ...s.fetch, syncSourceIndex: source, nextFetchAtMs: s.nowMs } };
  if (s.nowMs < s.fetch.nextFetchAtMs) return s;
  const request: OplogFetch = { kind: 'oplogFetch', lastFetched: lastAppliedOpTime(s), term: s.term };
  fx.send(source, request);
  return { ...s, fetch: { ...s.fetch, inFlight: { kind: 'oplogFetch', sentAtMs: s.nowMs } } };
}

export function fetcherWakeMs(s: TopologyState): number {
  const { inFlight, syncSourceIndex, nextFetchAtMs } = s.fetch;
  if (inFlight !== null) return inFlight.sentAtMs + OPLOG_FETCH_TIMEOUT_MS;
  return syncSourceIndex !== null && fetchingAllowed(s) ? nextFetchAtMs : Number.POSITIVE_INFINITY;
}

function sourceMetadata(s: TopologyState): SourceMetadata {
  return { term: s.term, lastOpCommitted: s.lastCommittedOpTime, lastOpApplied: lastAppliedOpTime(s), isPrimary: s.role === 'leader' };
}

// The source's side: the entries after `lastFetched` if it holds that entry (an empty oplog is
// read from its start), OplogStartMissing if it does not.
export function answerOplogFetch(s: TopologyState, fx: Effects, from: number, req: OplogFetch): void {
  const fromStart = opTimeEquals(req.lastFetched, NULL_OP_TIME);
  const at = fromStart ? -1 : s.oplog.findIndex((e) => opTimeEquals(entryOpTime(e), req.lastFetched));
  const response: OplogFetchResponse = !fromStart && at < 0
    ? { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: sourceMetadata(s) }
    : { kind: 'oplogFetchResponse', status: 'ok', entries: s.oplog.slice(at + 1, at + 1 + OPLOG_FETCH_BATCH_LIMIT), metadata: sourceMetadata(s) };
  fx.send(from, response);
}

export function answerRollbackFetch(s: TopologyState, fx: Effects, from: number, req: RollbackFetch): void {
  const entries = s.oplog.filter((e) => compareOpTime(entryOpTime(e), req.from) >= 0);
  const response: RollbackFetchResponse = { kind: 'rollbackFetchResponse', entries, metadata: sourceMetadata(s) };
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

// The source's metadata is its newest word on itself: a newer term, and where its oplog ends now
// (lower than a heartbeat said, if it rolled back since).
function noteSource(s: TopologyState, fx: Effects, from: number, metadata: SourceMetadata): TopologyState {
  const next = updateTerm(s, fx, metadata.term);
  return { ...next, members: next.members.map((m, i) => (i === from ? { ...m, appliedOpTime: metadata.lastOpApplied } : m)) };
}

export function onOplogFetchResponse(s: TopologyState, fx: Effects, from: number, r: OplogFetchResponse): TopologyState {
  if (s.fetch.syncSourceIndex !== from || s.fetch.inFlight?.kind !== 'oplogFetch') return s;
  let next = noteSource({ ...s, fetch: { ...s.fetch, inFlight: null } }, fx, from, r.metadata);
  if (!fetchingAllowed(next)) return next;
  if (r.status === 'OplogStartMissing') {
    // A new primary does not roll back: it stops catching up and writes its no-op.
    if (next.role === 'leader') return finishCatchUp(leaveSource(next), fx);
    if (!mayRollBackTo(next, r.metadata)) return denylistSource(next, from);
    next = setMemberState(next, fx, 'ROLLBACK');
    fx.send(from, { kind: 'rollbackFetch', from: next.lastCommittedOpTime });
    return { ...next, fetch: { ...next.fetch, inFlight: { kind: 'rollbackFetch', sentAtMs: next.nowMs } } };
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

// docshard's rule, beyond MongoDB's: roll back only to a source whose last entry is of our own term.
// Such a source's oplog is a prefix of that term's primary's, which holds every committed entry, so
// whatever we hold that it lacks was never committed. A source with an older history (a primary of
// an older term, restarted before it heard of ours) could make us truncate entries that a newer
// primary has committed since, while our own commit point does not yet show it.
function mayRollBackTo(s: TopologyState, metadata: SourceMetadata): boolean {
  return metadata.lastOpApplied.t >= s.term;
}

// Rollback: the common point is our newest entry the source also holds; everything after it goes,
// and the source's entries after it take its place. A common point below our commit point would
// undo a majority-committed write: refused, as MongoDB refuses it, and the source denylisted.
export function onRollbackFetchResponse(s: TopologyState, fx: Effects, from: number, r: RollbackFetchResponse): TopologyState {
  if (s.fetch.syncSourceIndex !== from || s.fetch.inFlight?.kind !== 'rollbackFetch') return s;
  let next = noteSource({ ...s, fetch: { ...s.fetch, inFlight: null } }, fx, from, r.metadata);
  if (next.role !== 'follower') return next;
  if (!mayRollBackTo(next, r.metadata)) return setMemberState(denylistSource(next, from), fx, 'SECONDARY');
  const theirs = new Set(r.entries.map((e) => `${e.t}:${e.ts}`));
  let common = next.oplog.length - 1;
  while (common >= 0 && !theirs.has(`${next.oplog[common]!.t}:${next.oplog[common]!.ts}`)) common--;
  const commonOpTime = common >= 0 ? entryOpTime(next.oplog[common]!) : null;
  if (commonOpTime === null || compareOpTime(commonOpTime, next.lastCommittedOpTime) < 0) {
    fx.add({ type: 'rollbackRefused', reason: 'the common point with the sync source is older than the commit point' });
    return setMemberState(denylistSource(next, from), fx, 'SECONDARY');
  }
  const after = r.entries.filter((e) => compareOpTime(entryOpTime(e), commonOpTime) > 0);
  fx.add({ type: 'truncateOplogAfter', opTime: commonOpTime });
  if (after.length > 0) fx.add({ type: 'appendOplog', entries: after });
  next = { ...next, oplog: [...next.oplog.slice(0, common + 1), ...after], fetch: { ...next.fetch, nextFetchAtMs: next.nowMs } };
  return setMemberState(next, fx, 'SECONDARY');
}
