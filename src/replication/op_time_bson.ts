import { Long, Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { NULL_OP_TIME, OPTIME_TS_PER_SECOND, type OpTime } from '../repl/op_time.js';

// The core's optimes as MongoDB's wire and disk carry them: `{ts: Timestamp, t: Long}`, the core's
// ts being seconds * OPTIME_TS_PER_SECOND + increment.

export function coreTs(ts: Timestamp): number {
  if (ts.i >= OPTIME_TS_PER_SECOND) throw new Error(`timestamp increment ${ts.i} is past what an optime holds (${OPTIME_TS_PER_SECOND - 1})`);
  return ts.t * OPTIME_TS_PER_SECOND + ts.i;
}

export function bsonTimestamp(ts: number): Timestamp {
  return new Timestamp({ t: Math.floor(ts / OPTIME_TS_PER_SECOND), i: ts % OPTIME_TS_PER_SECOND });
}

export function opTimeDocument(o: OpTime): Doc {
  return { ts: bsonTimestamp(o.ts), t: Long.fromNumber(o.t) };
}

// A member's message field; anything unreadable is the null optime, as MongoDB's parsers default it.
export function parseOpTime(v: unknown): OpTime {
  if (typeof v !== 'object' || v === null) return NULL_OP_TIME;
  const { ts, t } = v as { ts?: unknown; t?: unknown };
  if (!(ts instanceof Timestamp)) return NULL_OP_TIME;
  return { ts: coreTs(ts), t: Number(t ?? -1) };
}

// An optime's wall-clock date as replSetGetStatus shows it (the timestamp's seconds).
export function opTimeDate(o: OpTime): Date {
  return new Date(Math.floor(o.ts / OPTIME_TS_PER_SECOND) * 1000);
}
