import type { Effects } from './effects.js';
import type { SourceMetadata } from './messages.js';
import { updateTerm } from './step_down.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

// The fetcher's bookkeeping, shared by the oplog fetcher and rollback.

// How long a source that sent a malformed batch or shares no history with us is not chosen again.
const DENYLIST_MS = 10_000;

export function leaveSource(s: TopologyState): TopologyState {
  return { ...s, fetch: { ...s.fetch, syncSourceIndex: null, inFlight: null, nextFetchAtMs: s.nowMs, requestedSourceIndex: null } };
}

export function denylistSource(s: TopologyState, source: number): TopologyState {
  const left = leaveSource(s);
  return { ...left, fetch: { ...left.fetch, denylist: { ...left.fetch.denylist, [source]: s.nowMs + DENYLIST_MS } } };
}

export function setMemberState(s: TopologyState, fx: Effects, state: TopologyState['memberState']): TopologyState {
  if (s.memberState === state) return s;
  fx.add({ type: 'memberStateChanged', state, term: s.term, writable: false });
  return { ...s, memberState: state };
}

// The source's metadata is its newest word on itself: a newer term, and where its oplog ends now
// (lower than a heartbeat said, if it rolled back since).
export function noteSource(s: TopologyState, fx: Effects, from: number, metadata: SourceMetadata): TopologyState {
  const next = updateTerm(s, fx, metadata.term);
  return { ...next, members: next.members.map((m, i) => (i === from ? { ...m, appliedOpTime: metadata.lastOpApplied } : m)) };
}

// What a source attaches to its answers about itself.
export function sourceMetadata(s: TopologyState): SourceMetadata {
  return { term: s.term, lastOpCommitted: s.lastCommittedOpTime, lastOpApplied: lastAppliedOpTime(s), isPrimary: s.role === 'leader' };
}
