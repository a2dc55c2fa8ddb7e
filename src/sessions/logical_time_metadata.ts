import { Binary, Long, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { bsonTypeName } from '../bson/compare.js';
import { deserializeDocument, isNumber, isPlainObject, serializeDocument, type Doc } from '../bson/values.js';
import type { LogicalClock } from './logical_clock.js';

// $clusterTime as it travels (MongoDB's LogicalTimeMetadata, a SignedLogicalTime):
// {clusterTime: Timestamp, signature: {hash: BinData(0, 20 bytes), keyId: Long}}. Until there is
// authentication every signature is the one mongos sends without it: 20 zero bytes, keyId 0.
// Also here, the same in bytes: the element every node-to-node request carries, and the fixed
// ending {..., $clusterTime, operationTime} of every reply a node writes, which a router reads and
// rewrites in place without decoding the reply.

const ZERO_HASH = new Binary(Buffer.alloc(20), 0);
const KEY_ID_ZERO = Long.fromNumber(0);

export function clusterTimeMetadata(clusterTime: Timestamp): Doc {
  return { clusterTime, signature: { hash: ZERO_HASH, keyId: KEY_ID_ZERO } };
}

// The time of a received $clusterTime, checked as MongoDB reads one (VectorClock's gossip in).
export function clusterTimeOf(value: unknown): Timestamp {
  if (!isPlainObject(value)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '$clusterTime' is the wrong type '${bsonTypeName(value)}', expected type 'object'`);
  const clusterTime = typedField(value, 'clusterTime', 'timestamp') as Timestamp;
  const signature = typedField(value, 'signature', 'object') as Doc;
  typedField(signature, 'hash', 'binData');
  if (!isNumber(signature.keyId)) {
    throw new MongoError(signature.keyId === undefined ? ErrorCodes.NoSuchKey : ErrorCodes.TypeMismatch, `Expected field "keyId" to have numeric type, but found ${bsonTypeName(signature.keyId)}`);
  }
  return clusterTime;
}

// bson_extract's wording for a missing field and a field of another type.
function typedField(doc: Doc, name: string, type: string): unknown {
  const value = doc[name];
  if (value === undefined) throw new MongoError(ErrorCodes.NoSuchKey, `Missing expected field "${name}"`);
  const actual = bsonTypeName(value);
  if (actual !== type) throw new MongoError(ErrorCodes.TypeMismatch, `"${name}" had the wrong type. Expected ${type}, found ${actual}`);
  return value;
}

// --- In bytes ---

// A BSON Timestamp is 8 bytes: the counter, then the seconds, both unsigned little-endian.
export function readTimestamp(buf: Buffer, at: number): Timestamp {
  return new Timestamp({ t: buf.readUInt32LE(at + 4), i: buf.readUInt32LE(at) });
}

export function writeTimestamp(buf: Buffer, at: number, ts: Timestamp): void {
  buf.writeUInt32LE(ts.i, at);
  buf.writeUInt32LE(ts.t, at + 4);
}

const ZERO = new Timestamp({ t: 0, i: 0 });
// The $clusterTime document as docshard writes it; its time is its first value.
const METADATA = serializeDocument(clusterTimeMetadata(ZERO));
const METADATA_TIME_AT = 4 + 1 + 'clusterTime'.length + 1;

// The $clusterTime document of `clusterTime`, in bytes.
export function clusterTimeMetadataBytes(clusterTime: Timestamp): Buffer {
  const out = Buffer.from(METADATA);
  writeTimestamp(out, METADATA_TIME_AT, clusterTime);
  return out;
}

const CLUSTER_TIME_NAME = Buffer.from('\x03$clusterTime\0', 'latin1');
const OPERATION_TIME_NAME = Buffer.from('\x11operationTime\0', 'latin1');

// The request element {$clusterTime: <metadata>}.
export const CLUSTER_TIME_ELEMENT_LENGTH = CLUSTER_TIME_NAME.length + METADATA.length;
const ELEMENT_TIME_AT = CLUSTER_TIME_NAME.length + METADATA_TIME_AT;

export function writeClusterTimeElement(out: Buffer, at: number, clusterTime: Timestamp): void {
  CLUSTER_TIME_NAME.copy(out, at);
  METADATA.copy(out, at + CLUSTER_TIME_NAME.length);
  writeTimestamp(out, at + ELEMENT_TIME_AT, clusterTime);
}

// Where the time of a $clusterTime element written at `at` is: a request built with a placeholder
// gets its time there once it is known.
export function clusterTimeElementTimeAt(at: number): number {
  return at + ELEMENT_TIME_AT;
}

// The end of every reply a node writes: the $clusterTime and operationTime elements and the
// document's terminator.
export const REPLY_TIMES_LENGTH = CLUSTER_TIME_ELEMENT_LENGTH + OPERATION_TIME_NAME.length + 8 + 1;
const REPLY_TEMPLATE = (() => {
  const out = Buffer.alloc(REPLY_TIMES_LENGTH);
  writeClusterTimeElement(out, 0, ZERO);
  OPERATION_TIME_NAME.copy(out, CLUSTER_TIME_ELEMENT_LENGTH);
  return out;
})();
const REPLY_CLUSTER_TIME_AT = ELEMENT_TIME_AT;
const REPLY_OPERATION_TIME_AT = CLUSTER_TIME_ELEMENT_LENGTH + OPERATION_TIME_NAME.length;

// Where the times end a reply body: the offset of its $clusterTime element when its last bytes
// are exactly that ending (a node's reply), -1 otherwise. Only the fields' own bytes are
// compared, not the document before them: a reply whose last top-level elements these are.
export function replyTimesAt(body: Buffer): number {
  const at = body.length - REPLY_TIMES_LENGTH;
  if (at < 5) return -1;
  return body.compare(REPLY_TEMPLATE, 0, REPLY_CLUSTER_TIME_AT, at, at + REPLY_CLUSTER_TIME_AT) === 0
    && body.compare(REPLY_TEMPLATE, REPLY_CLUSTER_TIME_AT + 8, REPLY_OPERATION_TIME_AT, at + REPLY_CLUSTER_TIME_AT + 8, at + REPLY_OPERATION_TIME_AT) === 0
    && body[body.length - 1] === 0 ? at : -1;
}

// Where the 8 bytes of the $clusterTime's and the operationTime's times are, in an ending at `timesAt`.
export function replyClusterTimeAt(timesAt: number): number {
  return timesAt + REPLY_CLUSTER_TIME_AT;
}

export function replyOperationTimeAt(timesAt: number): number {
  return timesAt + REPLY_OPERATION_TIME_AT;
}

// Writes the ending at `at` (the terminator's place of the document before them): the caller
// sized the buffer and writes the document's length.
export function writeReplyTimes(out: Buffer, at: number, clusterTime: Timestamp, operationTime: Timestamp): void {
  REPLY_TEMPLATE.copy(out, at);
  writeTimestamp(out, at + REPLY_CLUSTER_TIME_AT, clusterTime);
  writeTimestamp(out, at + REPLY_OPERATION_TIME_AT, operationTime);
}

// The same document as a driver sends it back: the official driver decodes the keyId (a Long) to a
// number, and writes the 0 it gets as an int32.
const DRIVER_METADATA = serializeDocument({ clusterTime: ZERO, signature: { hash: ZERO_HASH, keyId: 0 } });

function sameButTime(doc: Buffer, template: Buffer): boolean {
  return doc.length === template.length && doc.compare(template, 0, METADATA_TIME_AT, 0, METADATA_TIME_AT) === 0
    && doc.compare(template, METADATA_TIME_AT + 8, template.length, METADATA_TIME_AT + 8, template.length) === 0;
}

// The time of a received $clusterTime document in its bytes: read in place when it is as docshard
// writes it or as a driver echoes it back (every request a driver sends carries one), otherwise
// decoded and checked as clusterTimeOf checks it.
export function clusterTimeOfBytes(doc: Buffer): Timestamp {
  if (sameButTime(doc, DRIVER_METADATA) || sameButTime(doc, METADATA)) return readTimestamp(doc, METADATA_TIME_AT);
  return clusterTimeOf(deserializeDocument(doc));
}

// Node-to-node traffic's gossip (MongoDB's VectorClock gossipOut / gossipIn on internal
// connections), for a WireClient: every request carries this process's time, and each reply's
// time moves the clock.
export function networkGossip(clock: LogicalClock): { element(): Buffer; receive(reply: Buffer): void } {
  let last: { time: Timestamp; element: Buffer } | undefined;
  return {
    element() {
      const time = clock.now();
      if (last?.time !== time) {
        const element = Buffer.allocUnsafe(CLUSTER_TIME_ELEMENT_LENGTH);
        writeClusterTimeElement(element, 0, time);
        last = { time, element };
      }
      return last.element;
    },
    receive(reply) {
      const at = replyTimesAt(reply);
      if (at >= 0) clock.advance(readTimestamp(reply, replyClusterTimeAt(at)));
    },
  };
}
