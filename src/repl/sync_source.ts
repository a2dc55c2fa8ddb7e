import { isUp, type MemberData } from './member_data.js';
import { isReadable } from './member_state.js';
import { compareOpTime, maxOpTime, NULL_OP_TIME, type OpTime } from './op_time.js';
import { MAX_SYNC_SOURCE_LAG_TS, type ReplSetConfig, replSetSettings } from './repl_set_config.js';

export interface SyncSourceView {
  readonly config: ReplSetConfig;
  readonly selfIndex: number;
  readonly members: readonly MemberData[];
  readonly lastAppliedOpTime: OpTime;
  readonly nowMs: number;
  readonly denylist: Readonly<Record<number, number>>;
  // The member replSetSyncFrom asked for, kept even while it syncs from us.
  readonly requested?: number | null;
}

function freshestOpTime(v: SyncSourceView): OpTime {
  return v.members.reduce((acc, m, i) => (i === v.selfIndex ? acc : maxOpTime(acc, m.appliedOpTime)), NULL_OP_TIME);
}

// A member we may pull from at all: not denylisted, up, readable, holding data, not hidden, and ahead of us by the
// full optime (term first), so that a member holding a divergent tail of an old term sees a new
// primary as ahead and rolls back to it instead of waiting for it.
function isCandidate(v: SyncSourceView, i: number): boolean {
  const c = v.config.members[i]!;
  const m = v.members[i]!;
  if (i === v.selfIndex || c.arbiterOnly || c.hidden) return false;
  // Beyond MongoDB: never a member that syncs from us; two secondaries taking each other would
  // both wait for entries that only the primary can give them.
  if (m.syncSourceIndex === v.selfIndex) return false;
  if ((v.denylist[i] ?? Number.NEGATIVE_INFINITY) > v.nowMs) return false;
  if (m.state === null || !isReadable(m.state)) return false;
  if (!isUp(m, v.nowMs, replSetSettings(v.config).electionTimeoutMillis)) return false;
  if (!replSetSettings(v.config).chainingAllowed && m.state !== 'PRIMARY') return false;
  return compareOpTime(m.appliedOpTime, v.lastAppliedOpTime) > 0;
}

// TopologyCoordinator::chooseNewSyncSource: the nearest candidate by ping, first among those within
// maxSyncSourceLagSecs of the freshest member, then among all; the lower index breaks ties.
export function chooseNewSyncSource(v: SyncSourceView): number | null {
  const freshest = freshestOpTime(v);
  const candidates = v.config.members.map((_, i) => i).filter((i) => isCandidate(v, i));
  const fresh = candidates.filter((i) => v.members[i]!.appliedOpTime.ts >= freshest.ts - MAX_SYNC_SOURCE_LAG_TS);
  const pool = fresh.length > 0 ? fresh : candidates;
  const ping = (i: number): number => v.members[i]!.pingMs ?? Number.POSITIVE_INFINITY;
  return pool.reduce<number | null>((best, i) => (best === null || ping(i) < ping(best) ? i : best), null);
}

// TopologyCoordinator::shouldChangeSyncSource: why to leave the current source, or null to stay.
// `sourceOpTime` is the newest the source reported of itself (heartbeat or query metadata).
export function shouldChangeSyncSource(v: SyncSourceView, source: number, sourceOpTime: OpTime): string | null {
  const m = v.members[source]!;
  if (m.state === null || !isReadable(m.state)) return `sync source is ${m.state ?? 'UNKNOWN'}`;
  if (!isUp(m, v.nowMs, replSetSettings(v.config).electionTimeoutMillis)) return 'sync source is down';
  if (compareOpTime(sourceOpTime, v.lastAppliedOpTime) < 0) return 'sync source is behind us';
  if (m.syncSourceIndex === v.selfIndex && m.state !== 'PRIMARY' && v.requested !== source) return 'sync source syncs from us';
  const freshest = freshestOpTime(v);
  if (m.state !== 'PRIMARY' && sourceOpTime.ts < freshest.ts - MAX_SYNC_SOURCE_LAG_TS) {
    return 'sync source lags the freshest member by more than maxSyncSourceLagSecs';
  }
  return null;
}
