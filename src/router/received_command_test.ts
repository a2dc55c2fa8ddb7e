import { MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Double, Long, MinKey, ObjectId, Timestamp, deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import type { ChunkType, DatabaseType } from '../catalog/type_chunk.js';
import { encodeOpMsgRequest, OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import { ChunkManager } from './chunk_manager.js';
import { pointShard } from './find_fast_path.js';
import { cursorReplyBody, plainInsertReply, withRouterClusterTime } from './raw_reply.js';
import { clusterTimeMetadata, writeTimestamp } from '../sessions/logical_time_metadata.js';
import { RawDocument, serializeWithRaw } from '../wire/raw_bson.js';
import { TYPE_ARRAY, TYPE_BOOL, TYPE_INT64 } from './raw_elements.js';
import { commandShape, elementBounds, field, readReceivedCommand, receivedDocuments, requestClusterTimeAt, routedNamespace, shardRequest, valueBytes, type CommandShape } from './received_command.js';
import { chunkForInsert, numericPointShard } from './targeter.js';
import { targetDocuments } from './insert_fast_path.js';
import { encodeVersionedMessage, versionFields, versionTail, type Routing } from './versioned_request.js';

// The router's fast paths read a driver's command from its bytes; whatever they accept must mean
// what the decoded command means, and what they send the shard must be what the general path
// sends. Everything else must be left to the general path (undefined).

const SHAPE: CommandShape = commandShape('insert', [field('documents', TYPE_ARRAY, true), field('ordered', TYPE_BOOL, true), field('txnNumber', TYPE_INT64, false)]);

const lsid = { id: new Binary(Buffer.alloc(16, 7), 4) };
const driverInsert = { insert: 'c', documents: [{ _id: 1, x: 5 }, { x: 'é', _id: 2 }], ordered: true, lsid, txnNumber: Long.fromNumber(3), $db: 'db' };

function message(cmd: Doc, flags = 0): Buffer {
  return encodeOpMsgRequest(serializeDocument(cmd), 42, flags);
}

const clusterTime = new Timestamp({ t: 1_700_000_000, i: 7 });

// A shard request with the router's time written in, as the fast path writes it once the command
// has entered.
function stampedRequest(bytes: Buffer, command: NonNullable<ReturnType<typeof readReceivedCommand>>, tail: Buffer, also?: number[]): Buffer {
  const request = shardRequest(bytes, command, tail, also);
  writeTimestamp(request, requestClusterTimeAt(request, tail), clusterTime);
  return request;
}

test('a driver-shaped command is read field by field from its bytes', () => {
  const bytes = message(driverInsert);
  const command = readReceivedCommand(bytes, SHAPE);
  assert.ok(command);
  assert.equal(command.requestId, 42);
  assert.deepEqual(routedNamespace(bytes, command, SHAPE), { db: 'db', ns: 'db.c' });
  assert.deepEqual(valueBytes(bytes, command, SHAPE.lsidSlot), serializeDocument(lsid));
  assert.equal(valueBytes(bytes, command, 2)![0], 1);
  assert.deepEqual(deserializeDocument(valueBytes(bytes, command, 1)!), { 0: driverInsert.documents[0], 1: driverInsert.documents[1] });
  const bare = message({ insert: 'c', $db: 'db' });
  assert.equal(valueBytes(bare, readReceivedCommand(bare, SHAPE)!, 2), undefined, 'a field the command does not hold');
});

test('what is not exactly a shape the fast paths know is left to the general path', () => {
  const declined: [string, Buffer][] = [
    ['a flag bit', message(driverInsert, 1 << 16)],
    ['another command first', message({ txnNumber: Long.fromNumber(3), insert: 'c', $db: 'db' })],
    ['a field outside the shape', message({ ...driverInsert, writeConcern: { w: 1 } })],
    ['a field of another type', message({ ...driverInsert, ordered: 1 })],
    ['the collection not a string', message({ ...driverInsert, insert: 5 })],
    ['a field twice', Buffer.concat([message(driverInsert).subarray(0, 21), twice()])],
  ];
  for (const [what, bytes] of declined) assert.equal(readReceivedCommand(fixLength(bytes), SHAPE), undefined, what);
  const withSequence = message(driverInsert);
  const sequence = Buffer.concat([Buffer.from([1]), int32(4 + 'documents\0'.length), Buffer.from('documents\0')]);
  assert.equal(readReceivedCommand(fixLength(Buffer.concat([withSequence, sequence])), SHAPE), undefined, 'a document sequence');
  const badLsid = Buffer.from('\x03lsid\0\x08\0\0\0\x10a\0\0', 'latin1');
  assert.equal(readReceivedCommand(withElement(message({ insert: 'c', $db: 'db' }), badLsid), SHAPE), undefined, 'an lsid decoding refuses');
  assert.ok(readReceivedCommand(withElement(message({ insert: 'c', $db: 'db' }), Buffer.from('\x03lsid\0\x05\0\0\0\0', 'latin1')), SHAPE), 'an empty lsid is well formed');
  const truncated = message(driverInsert);
  truncated.writeInt32LE(truncated.readInt32LE(21) + 1, 21);
  assert.equal(readReceivedCommand(truncated, SHAPE), undefined, 'a body length past the message');

  const names: [Doc, boolean][] = [[{ insert: '' }, false], [{ insert: '.c' }, false], [{ insert: 'a$b' }, false], [{ insert: 'é' }, false], [{ insert: 'a.b' }, true]];
  for (const [cmd, ok] of names) {
    const bytes = message({ ...driverInsert, ...cmd });
    assert.equal(routedNamespace(bytes, readReceivedCommand(bytes, SHAPE)!, SHAPE) !== undefined, ok, JSON.stringify(cmd));
  }
  for (const db of ['config', 'admin', '', 'é']) {
    const bytes = message({ ...driverInsert, $db: db });
    assert.equal(routedNamespace(bytes, readReceivedCommand(bytes, SHAPE)!, SHAPE), undefined, db);
  }
});

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
}

// A body holding `ordered` twice (a document BSON libraries will not write).
function twice(): Buffer {
  const body = serializeDocument({ insert: 'c', ordered: true, $db: 'db' });
  const element = Buffer.from('\x08ordered\0\x01', 'latin1');
  const out = Buffer.concat([body.subarray(0, body.length - 1), element, Buffer.from([0])]);
  out.writeInt32LE(out.length, 0);
  return out;
}

// The message with `element` added at the end of its body.
function withElement(bytes: Buffer, element: Buffer): Buffer {
  const out = Buffer.concat([bytes.subarray(0, bytes.length - 1), element, Buffer.from([0])]);
  out.writeInt32LE(out.readInt32LE(21) + element.length, 21);
  return fixLength(out);
}

function fixLength(bytes: Buffer): Buffer {
  bytes.writeInt32LE(bytes.length, 0);
  return bytes;
}

const uuid = new Binary(Buffer.alloc(16, 9), 4);
const timestamp = new Timestamp({ t: 7, i: 1 });

function manager(key: Doc, mins: unknown[]): ChunkManager {
  const name = Object.keys(key)[0]!;
  const chunks: ChunkType[] = mins.map((min, i) => ({
    _id: new ObjectId(), uuid, min: { [name]: min }, max: { [name]: i + 1 < mins.length ? mins[i + 1] : new MaxKey() },
    shard: `s${i % 2}`, lastmod: new Timestamp({ t: 1, i }), onCurrentShardSince: timestamp, history: [],
  }));
  return ChunkManager.create({ _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key, unique: false }, chunks);
}

const database: DatabaseType = { _id: 'db', primary: 's0', version: { uuid: new Binary(Buffer.alloc(16, 1), 4), timestamp, lastMod: 1 } };

function sequenceSection(identifier: string, documents: Doc[]): Buffer {
  const docs = Buffer.concat(documents.map((d) => serializeDocument(d)));
  const name = Buffer.from(`${identifier}\0`);
  return Buffer.concat([Buffer.from([1]), int32(4 + name.length + docs.length), name, docs]);
}

test('the documents of an insert come from its body array or from its one document sequence', () => {
  const shape = commandShape('insert', [field('documents', TYPE_ARRAY, true), field('ordered', TYPE_BOOL, true), field('txnNumber', TYPE_INT64, false)], 'documents');
  const { documents, ...body } = driverInsert;
  const inArray = message(driverInsert);
  assert.deepEqual(receivedDocuments(inArray, readReceivedCommand(inArray, shape)!, 1), documents.map((d) => serializeDocument(d)));
  const inSequence = fixLength(Buffer.concat([message(body), sequenceSection('documents', documents)]));
  const command = readReceivedCommand(inSequence, shape);
  assert.ok(command);
  assert.deepEqual(receivedDocuments(inSequence, command, 1), documents.map((d) => serializeDocument(d)));
  const routing: Routing = { ns: 'db.c', db: database, cm: undefined };
  const request = stampedRequest(inSequence, command, versionTail(routing, 's0', 'db'));
  const { lsid: _l, txnNumber: _t, $db: _d, ...forwarded } = body;
  const expected = encodeVersionedMessage(routing, 's0', 'db', forwarded, clusterTime, { identifier: 'documents', documents: documents.map((d) => serializeDocument(d)) });
  assert.deepEqual(request.subarray(OP_MSG_REPLY_PREFIX), expected.subarray(OP_MSG_REPLY_PREFIX), 'the sequence passed on after the versioned body');
  for (const [what, bytes] of [
    ['documents in the body and in a sequence', fixLength(Buffer.concat([message(driverInsert), sequenceSection('documents', documents)]))],
    ['a sequence of another name', fixLength(Buffer.concat([message(body), sequenceSection('updates', documents)]))],
    ['two sequences', fixLength(Buffer.concat([message(body), sequenceSection('documents', documents), sequenceSection('documents', documents)]))],
  ] as const) assert.equal(readReceivedCommand(bytes, shape), undefined, what);
  const cut = fixLength(Buffer.concat([message(body), sequenceSection('documents', documents).subarray(0, -3)]));
  assert.equal(readReceivedCommand(cut, shape), undefined, 'a sequence shorter than it says');
  const arrayOfNumbers = message({ ...driverInsert, documents: [1, 2] });
  assert.equal(receivedDocuments(arrayOfNumbers, readReceivedCommand(arrayOfNumbers, shape)!, 1), undefined, 'an array of other values');
});

test("the shard's request is encodeVersionedMessage's: the forwarded fields, those asked for, the version, $db", () => {
  const cm = manager({ x: 1 }, [new MinKey(), 0, 10]);
  for (const routing of [{ ns: 'db.c', db: database, cm }, { ns: 'db.c', db: database, cm: undefined }] as Routing[]) {
    const bytes = message(driverInsert);
    const command = readReceivedCommand(bytes, SHAPE)!;
    const request = stampedRequest(bytes, command, versionTail(routing, 's1', 'db'));
    const { lsid: _l, txnNumber: _t, $db: _d, ...forwarded } = driverInsert;
    assert.deepEqual(request.subarray(OP_MSG_REPLY_PREFIX), encodeVersionedMessage(routing, 's1', 'db', forwarded, clusterTime).subarray(OP_MSG_REPLY_PREFIX));
    assert.deepEqual(deserializeDocument(request.subarray(OP_MSG_REPLY_PREFIX)), deserializeDocument(serializeDocument({ ...forwarded, $clusterTime: clusterTimeMetadata(clusterTime), ...versionFields(routing, 's1'), $db: 'db' })));
    // Fields the shape keeps are passed on when asked for, in the order asked, after the others.
    const session = stampedRequest(bytes, command, versionTail(routing, 's1', 'db'), elementBounds(command, SHAPE, [SHAPE.lsidSlot, 3]));
    const withSession = { ...forwarded, lsid, txnNumber: driverInsert.txnNumber };
    assert.deepEqual(session.subarray(OP_MSG_REPLY_PREFIX), encodeVersionedMessage(routing, 's1', 'db', withSession, clusterTime).subarray(OP_MSG_REPLY_PREFIX));
  }
  const bare = message({ insert: 'c', $db: 'db' });
  assert.deepEqual(elementBounds(readReceivedCommand(bare, SHAPE)!, SHAPE, [SHAPE.lsidSlot, 3]), [], 'fields the command does not hold');
});

test('a point read targeted from its filter bytes goes where numericPointShard sends it', () => {
  const cm = manager({ x: 1 }, [new MinKey(), -100, 0, 0.5, 10, 1e6]);
  const routing: Routing = { ns: 'db.c', db: database, cm };
  const keys = [-1e9, -100, -99.5, -1, 0, 0.25, 0.5, 3, 10, 11, 1e6, 2e6, -Infinity, Infinity];
  for (const k of keys) {
    for (const filter of [{ x: k }, { x: new Double(k) }]) {
      assert.equal(pointShard(routing, serializeDocument(filter)), numericPointShard(cm, { x: k }), `x: ${k}`);
    }
  }
  for (const filter of [{ x: 'a' }, { x: 1, y: 1 }, { y: 1 }, { x: { $eq: 1 } }, { x: Long.fromNumber(1) }, {}, { xx: 1 }]) {
    assert.equal(pointShard(routing, serializeDocument(filter)), undefined, JSON.stringify(filter));
  }
  assert.equal(pointShard(routing, undefined), undefined);
  assert.equal(pointShard({ ns: 'db.c', db: database, cm: undefined }, serializeDocument({ anything: 1 })), 's0', 'unsharded: the primary shard');
  const hashed: Routing = { ns: 'db.c', db: database, cm: manager({ x: 'hashed' }, [new MinKey(), Long.fromNumber(0)]) };
  assert.equal(pointShard(hashed, serializeDocument({ x: 5 })), undefined);
});

// A node's reply: the document, then its $clusterTime and operationTime.
function nodeReply(doc: Doc, shardTime: Timestamp, operationTime: Timestamp): Buffer {
  return serializeDocument({ ...doc, $clusterTime: clusterTimeMetadata(shardTime), operationTime });
}

const shardTime = new Timestamp({ t: 1_600_000_000, i: 3 });
const writeTime = new Timestamp({ t: 1_600_000_000, i: 2 });

test("the find's reply is written as the general path's encoder writes it, with the router's time and the shard's operationTime", () => {
  const cursor = serializeDocument({ firstBatch: [{ _id: 1, s: 'é' }], id: Long.ZERO, ns: 'db.c' });
  const general = (operationTime: Timestamp): Buffer => serializeWithRaw({ cursor: new RawDocument(cursor), ok: 1, $clusterTime: clusterTimeMetadata(clusterTime), operationTime });
  const fromNode = nodeReply({ cursor: deserializeDocument(cursor), ok: 1 }, shardTime, writeTime);
  assert.deepEqual(cursorReplyBody(cursor, OP_MSG_REPLY_PREFIX, clusterTime, fromNode).subarray(OP_MSG_REPLY_PREFIX), general(writeTime));
  const withoutTimes = serializeDocument({ cursor: deserializeDocument(cursor), ok: 1 });
  assert.deepEqual(cursorReplyBody(cursor, OP_MSG_REPLY_PREFIX, clusterTime, withoutTimes).subarray(OP_MSG_REPLY_PREFIX), general(clusterTime), "the router's time when the shard gave none");
});

test('only {n: <count>, ok: 1} and a node\'s times are a plain insert reply, passed on with the router\'s $clusterTime', () => {
  const plain = nodeReply({ n: 3, ok: 1 }, shardTime, writeTime);
  assert.equal(plainInsertReply(plain, 3), true);
  for (const other of [{ n: 3, ok: new Double(1) }, { n: 2, ok: 1 }, { n: 3, ok: 0 }, { ok: 1, n: 3 }, { n: 3, ok: 1, writeErrors: [] }, { n: 3 }, { n: new Double(3), ok: 1 }, { n: 3, ok: 1, extra: 1 }]) {
    assert.equal(plainInsertReply(nodeReply(other, shardTime, writeTime), 3), false, JSON.stringify(other));
  }
  assert.equal(plainInsertReply(serializeDocument({ n: 3, ok: 1 }), 3), false, 'without the times');
  assert.equal(plainInsertReply(serializeDocument({ n: 3, ok: 1, operationTime: writeTime, $clusterTime: clusterTimeMetadata(shardTime) }), 3), false, 'the times in another order');
  assert.equal(plainInsertReply(plain.subarray(0, 10), 3), false, 'truncated');
  assert.deepEqual(deserializeDocument(withRouterClusterTime(Buffer.from(plain), clusterTime)), deserializeDocument(nodeReply({ n: 3, ok: 1 }, clusterTime, writeTime)));
});

test("an insert's documents are targeted from their bytes to the chunks of their decoded form", () => {
  const numeric = manager({ k: 1 }, [new MinKey(), -100, 0, 0.5, 10, 1e6]);
  const strings = manager({ k: 1 }, [new MinKey(), 'b', 'm']);
  const byId = manager({ _id: 1 }, [new MinKey(), 0, 10]);
  const nested = manager({ 'k.x': 1 }, [new MinKey(), 0, 10]);
  const hashed = manager({ k: 'hashed' }, [new MinKey(), Long.fromNumber(0)]);
  const docs: Doc[] = [
    { _id: 1, k: 5 }, { _id: 2, k: -1e9 }, { k: 0.25, _id: 3 }, { _id: 4, k: new Double(10) }, { _id: 5, k: NaN }, { _id: 6 },
    { _id: 7, k: 'c' }, { _id: 8, k: 'z' }, { _id: 9, k: null }, { _id: 10, k: Long.fromNumber(12) }, { _id: 11, k: { x: 3 } }, { _id: 12, k: 1e6 },
  ];
  for (const cm of [numeric, strings, byId, nested, hashed]) {
    const routing: Routing = { ns: 'db.c', db: database, cm };
    for (const doc of docs) {
      const bytes = serializeDocument(doc);
      const expected = chunkForInsert(cm, deserializeDocument(bytes));
      assert.deepEqual(targetDocuments(routing, [bytes]), { shard: expected.shard, chunks: [expected] }, `${JSON.stringify(cm.shardKeyPattern.fields)} ${String(doc.k)}`);
    }
  }
  const two = targetDocuments({ ns: 'db.c', db: database, cm: numeric }, [serializeDocument({ _id: 1, k: -1e9 }), serializeDocument({ _id: 2, k: 5 })]);
  assert.equal(two, undefined, 'documents of two shards');
  assert.equal(targetDocuments({ ns: 'db.c', db: database, cm: numeric }, [serializeDocument({ k: 5 })]), undefined, 'no _id: the router gives one on the general path');
  assert.deepEqual(targetDocuments({ ns: 'db.c', db: database, cm: undefined }, [serializeDocument({ _id: 1 })]), { shard: 's0', chunks: [] }, 'unsharded: the primary shard');
});
