import type { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { bsonTypeName } from '../bson/compare.js';
import { isPlainObject } from '../bson/values.js';
import { isLater } from './logical_clock.js';

// readConcern's afterClusterTime (MongoDB's ReadConcernArgs, the part that bears on it): what a
// causally consistent session's reads send. The levels are accepted as before: a node is its own
// majority, so local and majority read the same; afterClusterTime is never ignored.

// The commands that read at a snapshot outside a transaction, as MongoDB 5.0 and later allow.
const SNAPSHOT_READ_COMMANDS = new Set(['find', 'aggregate', 'distinct']);

// A readConcern snapshot outside a transaction: the time to read at, its atClusterTime or else the
// node's cluster time now (every commit at or before it is in, or is waited for); undefined for
// another level. Checked as MongoDB checks it.
export function snapshotReadOf(commandName: string, readConcern: unknown, now: Timestamp): { atClusterTime: Timestamp } | undefined {
  // A getMore reads at its cursor's snapshot; the driver's snapshot session sends it the readConcern too.
  if (!isPlainObject(readConcern) || commandName === 'getMore') return undefined;
  const at = readConcern.atClusterTime;
  if (readConcern.level !== 'snapshot') {
    if (at !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'atClusterTime field can be set only if level is snapshot');
    return undefined;
  }
  if (!SNAPSHOT_READ_COMMANDS.has(commandName)) {
    throw new MongoError(ErrorCodes.InvalidOptions, `Command ${commandName} does not support { readConcern: { level: "snapshot" } }`);
  }
  if (at === undefined) return { atClusterTime: now };
  const type = bsonTypeName(at);
  if (type !== 'timestamp') throw new MongoError(ErrorCodes.TypeMismatch, `"atClusterTime" had the wrong type. Expected timestamp, found ${type}`);
  const ts = at as Timestamp;
  if (ts.t === 0 && ts.i === 0) throw new MongoError(ErrorCodes.InvalidOptions, 'atClusterTime cannot be a null timestamp');
  if (isLater(ts.t, ts.i, now.t, now.i)) {
    throw new MongoError(ErrorCodes.InvalidOptions, `readConcern atClusterTime value must not be greater than the current clusterTime. Requested clusterTime: ${logicalTimeString(ts)}; current clusterTime: ${logicalTimeString(now)}`);
  }
  return { atClusterTime: ts };
}

// The afterClusterTime a readConcern asks for, checked as MongoDB parses it; undefined without one.
export function afterClusterTimeOf(readConcern: unknown): Timestamp | undefined {
  if (!isPlainObject(readConcern) || readConcern.afterClusterTime === undefined) return undefined;
  const value = readConcern.afterClusterTime;
  const type = bsonTypeName(value);
  if (type !== 'timestamp') throw new MongoError(ErrorCodes.TypeMismatch, `"afterClusterTime" had the wrong type. Expected timestamp, found ${type}`);
  const target = value as Timestamp;
  if (readConcern.afterOpTime !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'Can not specify both afterClusterTime and afterOpTime');
  if (readConcern.atClusterTime !== undefined) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'Specifying a timestamp for readConcern snapshot in a causally consistent session is not allowed. See https://docs.mongodb.com/manual/core/read-isolation-consistency-recency/#causal-consistency');
  }
  // 'available' promises not to wait; 'linearizable' reads are causally consistent already.
  const level = readConcern.level ?? 'local';
  if (level !== 'local' && level !== 'majority' && level !== 'snapshot') {
    throw new MongoError(ErrorCodes.InvalidOptions, 'afterClusterTime field can be set only if level is equal to majority, local, or snapshot');
  }
  if (target.t === 0 && target.i === 0) throw new MongoError(ErrorCodes.InvalidOptions, 'afterClusterTime cannot be a null timestamp');
  return target;
}

// getMore reads with its cursor's read concern and refuses an afterClusterTime of its own, on
// nodes and routers.
export function checkAfterClusterTimeAllowed(commandName: string): void {
  if (commandName === 'getMore') throw new MongoError(ErrorCodes.InvalidOptions, 'afterClusterTime is not allowed for this command');
}

// MongoDB's waitForReadConcern on a node, before the wait itself: a time the node's clock has not
// reached is one it could not have issued (a client's gossip would have moved the clock past any
// time it was given).
export function checkAfterClusterTime(target: Timestamp, clusterTime: Timestamp): void {
  if (isLater(target.t, target.i, clusterTime.t, clusterTime.i)) {
    throw new MongoError(ErrorCodes.InvalidOptions, `readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: ${logicalTimeString(target)}; current clusterTime: ${logicalTimeString(clusterTime)}`);
  }
}

// LogicalTime::toString: its BSON form, {ts: <Timestamp>}.
function logicalTimeString(ts: Timestamp): string {
  return `{ ts: Timestamp(${ts.t}, ${ts.i}) }`;
}
