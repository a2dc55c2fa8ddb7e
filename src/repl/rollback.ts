import type { Effects } from './effects.js';
import { denylistSource, noteSource, setMemberState, sourceMetadata } from './fetch_state.js';
import type { RollbackFetch, RollbackFetchResponse, SourceMetadata } from './messages.js';
import { entryOpTime } from './oplog_entry.js';
import { compareOpTime, formatOpTime } from './op_time.js';
import { reachesBack, sourceTooStale } from './too_stale.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

// docshard's rule, beyond MongoDB's: roll back only to a source whose last entry is of our own term.
// Such a source's oplog is a prefix of that term's primary's, which holds every committed entry, so
// whatever we hold that it lacks was never committed. A source with an older history (a primary of
// an older term, restarted before it heard of ours) could make us truncate entries that a newer
// primary has committed since, while our own commit point does not yet show it.
function mayRollBackTo(s: TopologyState, metadata: SourceMetadata): boolean {
  return metadata.lastOpApplied.t >= s.term;
}

// OplogStartMissing: the source lacks our last entry, so our histories diverged. Read its oplog back
// to our commit point to find where.
export function startRollback(s: TopologyState, fx: Effects, from: number, metadata: SourceMetadata): TopologyState {
  if (!mayRollBackTo(s, metadata)) return denylistSource(s, from);
  const next = setMemberState(s, fx, 'ROLLBACK');
  fx.send(from, { kind: 'rollbackFetch', from: next.lastCommittedOpTime });
  return { ...next, fetch: { ...next.fetch, inFlight: { kind: 'rollbackFetch', sentAtMs: next.nowMs } } };
}

// The source's side: its entries from the fetcher's commit point on.
export function answerRollbackFetch(s: TopologyState, fx: Effects, from: number, req: RollbackFetch): void {
  const entries = s.oplog.filter((e) => compareOpTime(entryOpTime(e), req.from) >= 0);
  const oldest = s.oplog[0];
  const response: RollbackFetchResponse = { kind: 'rollbackFetchResponse', entries, metadata: sourceMetadata(s), oldestOpTime: oldest === undefined ? null : entryOpTime(oldest) };
  fx.send(from, response);
}

// Rollback: the common point is our newest entry the source also holds; everything after it goes,
// and the source's entries after it take its place. A source whose oplog no longer reaches our
// commit point cannot show where we part (too stale). One that does, yet shares nothing with us
// from it on, lacks a majority-committed entry: the rollback is refused, as MongoDB refuses it, and
// the driver stops this member rather than undo the write.
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
    // Said in full: the member stops on it, and whoever reads the log must find why.
    if (!reachesBack(r.oldestOpTime, next)) return setMemberState(sourceTooStale(next, fx, from, r.oldestOpTime), fx, 'SECONDARY');
    const held = r.entries.length === 0 ? 'no entries' : `${r.entries.length} entries from ${formatOpTime(entryOpTime(r.entries[0]!))} to ${formatOpTime(entryOpTime(r.entries.at(-1)!))}`;
    const reason = `the common point with the sync source (member ${from}) is older than the commit point ${formatOpTime(next.lastCommittedOpTime)}: `
      + `it sent ${held}; ours run to ${formatOpTime(lastAppliedOpTime(next))}`;
    fx.add({ type: 'rollbackRefused', reason });
    return setMemberState(denylistSource(next, from), fx, 'SECONDARY');
  }
  const after = r.entries.filter((e) => compareOpTime(entryOpTime(e), commonOpTime) > 0);
  fx.add({ type: 'truncateOplogAfter', opTime: commonOpTime });
  if (after.length > 0) fx.add({ type: 'appendOplog', entries: after });
  next = { ...next, oplog: [...next.oplog.slice(0, common + 1), ...after], fetch: { ...next.fetch, nextFetchAtMs: next.nowMs } };
  return setMemberState(next, fx, 'SECONDARY');
}
