// Just enough of a shard's find and insert replies, read in their BSON bytes, to pass the answer
// on without decoding and re-encoding it: the router's reply to a find the shard answered whole
// is the shard's `cursor` sub-document itself, and to an insert it stored whole the shard's reply;
// either ends with the router's $clusterTime and the shard's operationTime
// (sessions/logical_time_metadata.ts reads and writes those in place).

import type { Timestamp } from 'bson';
import { serializeDocument } from '../bson/values.js';
import { replyClusterTimeAt, replyOperationTimeAt, replyTimesAt, REPLY_TIMES_LENGTH, writeReplyTimes, writeTimestamp } from '../sessions/logical_time_metadata.js';
import { isOne, nameIs, newElement, readElement, stringIs, TYPE_ARRAY, TYPE_DOCUMENT, TYPE_INT64, TYPE_STRING } from './raw_elements.js';

const OK = Buffer.from('ok');
const CURSOR = Buffer.from('cursor');
const FIRST_BATCH = Buffer.from('firstBatch');
const ID = Buffer.from('id');
const NS = Buffer.from('ns');

// The bytes of the reply's `cursor` document when the reply is ok: 1 and that document is
// exactly {firstBatch: [...], id: Long(0), ns: <ns>}, i.e. what the router would send back after
// decoding it; undefined for anything else (an error, an open cursor, another shape, bytes that
// do not parse), which the caller then decodes and handles as before. Other fields (the shard's
// times) are passed over.
export function completedCursorBytes(reply: Buffer, ns: string): Buffer | undefined {
  if (reply.length < 5 || reply.readInt32LE(0) !== reply.length || reply[reply.length - 1] !== 0) return undefined;
  let ok = false;
  let cursor: Buffer | undefined;
  const end = reply.length - 1;
  const e = newElement();
  let pos = 4;
  while (pos < end) {
    if (!readElement(reply, pos, end, e)) return undefined;
    if (nameIs(reply, e.nameStart, e.nameEnd, OK)) {
      ok = isOne(reply, e.type, e.valueStart);
      if (!ok) return undefined;
    } else if (nameIs(reply, e.nameStart, e.nameEnd, CURSOR)) {
      if (e.type !== TYPE_DOCUMENT || cursor !== undefined) return undefined;
      cursor = reply.subarray(e.valueStart, e.end);
    }
    pos = e.end;
  }
  if (pos !== end || !ok || cursor === undefined) return undefined;
  return isCompletedCursor(cursor, ns) ? cursor : undefined;
}

function isCompletedCursor(doc: Buffer, ns: string): boolean {
  const end = doc.length - 1;
  const e = newElement();
  let pos = 4;
  let field = 0;
  while (pos < end) {
    if (!readElement(doc, pos, end, e)) return false;
    const { type, nameStart, nameEnd, valueStart } = e;
    switch (field++) {
      case 0:
        if (type !== TYPE_ARRAY || !nameIs(doc, nameStart, nameEnd, FIRST_BATCH)) return false;
        break;
      case 1:
        if (type !== TYPE_INT64 || !nameIs(doc, nameStart, nameEnd, ID) || doc.readInt32LE(valueStart) !== 0 || doc.readInt32LE(valueStart + 4) !== 0) return false;
        break;
      case 2:
        if (type !== TYPE_STRING || !nameIs(doc, nameStart, nameEnd, NS) || !stringIs(doc, valueStart + 4, e.end - 1, ns)) return false;
        break;
      default:
        return false;
    }
    pos = e.end;
  }
  return pos === end && field === 3;
}

const CURSOR_ELEMENT = Buffer.from('\x03cursor\0', 'latin1');
const OK_ONE_ELEMENT = Buffer.from('\x10ok\0\x01\0\0\0', 'latin1');

// The router's reply {cursor: <cursor>, ok: 1, $clusterTime, operationTime} to a find the shard
// answered whole (the bytes serializeWithRaw writes for it), after `prefix` bytes left for the
// message header: the router's time, and the operationTime of `shardReply` (its own time when the
// shard's reply does not end as a node's does).
export function cursorReplyBody(cursor: Buffer, prefix: number, clusterTime: Timestamp, shardReply: Buffer): Buffer {
  const length = 4 + CURSOR_ELEMENT.length + cursor.length + OK_ONE_ELEMENT.length + REPLY_TIMES_LENGTH;
  const out = Buffer.allocUnsafe(prefix + length);
  out.writeInt32LE(length, prefix);
  let pos = prefix + 4;
  pos += CURSOR_ELEMENT.copy(out, pos);
  pos += cursor.copy(out, pos);
  pos += OK_ONE_ELEMENT.copy(out, pos);
  writeReplyTimes(out, pos, clusterTime, clusterTime);
  const shardTimes = replyTimesAt(shardReply);
  if (shardTimes >= 0) shardReply.copy(out, replyOperationTimeAt(pos), replyOperationTimeAt(shardTimes), replyOperationTimeAt(shardTimes) + 8);
  return out;
}

// {n: <int32>, ok: <int32 1>}, the count at N_AT, then a node's $clusterTime and operationTime.
const PLAIN_INSERT_REPLY = serializeDocument({ n: 0, ok: 1 });
const N_AT = 7;
const TIMES_AT = PLAIN_INSERT_REPLY.length - 1;

// Whether the reply is exactly {n: <count>, ok: 1, $clusterTime, operationTime} (n and ok int32): a
// shard that stored every document of an insert, which is also the router's reply to it once its
// $clusterTime is the router's (withRouterClusterTime).
export function plainInsertReply(reply: Buffer, count: number): boolean {
  return reply.length === TIMES_AT + REPLY_TIMES_LENGTH && reply.readInt32LE(N_AT) === count
    && reply.compare(PLAIN_INSERT_REPLY, 4, N_AT, 4, N_AT) === 0
    && reply.compare(PLAIN_INSERT_REPLY, N_AT + 4, TIMES_AT, N_AT + 4, TIMES_AT) === 0
    && replyTimesAt(reply) === TIMES_AT;
}

// A plain insert reply with the router's $clusterTime written over the shard's, in place.
export function withRouterClusterTime(reply: Buffer, clusterTime: Timestamp): Buffer {
  writeTimestamp(reply, replyClusterTimeAt(TIMES_AT), clusterTime);
  return reply;
}
