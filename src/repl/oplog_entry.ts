import type { OpTime } from './op_time.js';

// One entry of local.oplog.rs as the protocol sees it: its optime and what it records. The core
// only compares entries; what `o` holds is the data layer's business.
export interface OplogEntry {
  readonly ts: number;
  readonly t: number;
  // 'n' a no-op (the "new primary" entry, the set's first entry), 'i'/'u'/'d'/'c' data changes.
  readonly op: 'n' | 'i' | 'u' | 'd' | 'c';
  readonly o: Readonly<Record<string, unknown>>;
}

export function entryOpTime(e: OplogEntry): OpTime {
  return { ts: e.ts, t: e.t };
}

// The no-op a new primary writes in its term before it accepts writes: until an entry of its own
// term is majority-committed it cannot advance the commit point (commit_point.ts).
export function newPrimaryNoop(opTime: OpTime): OplogEntry {
  return { ts: opTime.ts, t: opTime.t, op: 'n', o: { msg: 'new primary' } };
}
