// MongoDB's OpTime: where an entry sits in the oplog. `ts` is the entry's timestamp and `t` the term
// of the primary that wrote it. In this core a timestamp is a number: a BSON Timestamp (seconds,
// increment) is `seconds * OPTIME_TS_PER_SECOND + increment` (the driver maps it; exact in a double
// until the year 2255), so optime distances in seconds are multiples of OPTIME_TS_PER_SECOND.
export interface OpTime {
  readonly ts: number;
  readonly t: number;
}

// What a member with an empty oplog has applied; below every real optime.
export const OPTIME_TS_PER_SECOND = 1_000_000;

export const NULL_OP_TIME: OpTime = { ts: 0, t: -1 };

// Term first, then timestamp, as MongoDB orders optimes: an entry of a newer term is newer even if
// its timestamp is smaller, which is what lets a member with a divergent tail of an old term see
// that a new primary is ahead of it.
export function compareOpTime(a: OpTime, b: OpTime): number {
  if (a.t !== b.t) return a.t < b.t ? -1 : 1;
  if (a.ts !== b.ts) return a.ts < b.ts ? -1 : 1;
  return 0;
}

export function opTimeEquals(a: OpTime, b: OpTime): boolean {
  return compareOpTime(a, b) === 0;
}

export function maxOpTime(a: OpTime, b: OpTime): OpTime {
  return compareOpTime(a, b) >= 0 ? a : b;
}

export function minOpTime(a: OpTime, b: OpTime): OpTime {
  return compareOpTime(a, b) <= 0 ? a : b;
}

export function formatOpTime(o: OpTime): string {
  return `{ts: ${o.ts}, t: ${o.t}}`;
}
