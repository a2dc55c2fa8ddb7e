import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Binary, BSON, Long } from 'bson';
import { compressSync as snappyCompress } from 'snappy';
import { MongoClient, type Collection } from 'mongodb';
import { DRIVER_SPECS, skipWithoutDriverSpecs } from '../helpers/driver_specs.js';
import { spawnCluster } from '../helpers/spawn_cluster.js';
import { removeDir, spawnNode, type AnyDoc } from '../helpers/spawn_node.js';
import { exchange, frame, mutate, nestedDocument, opMsgPayload, Prober, rng, sequencePayload, withDocumentField } from '../helpers/wire_fuzz.js';

const CORPUS_DIR = 'bson-corpus/tests';
const CORPUS = path.join(DRIVER_SPECS, CORPUS_DIR);
const MESSAGES = 10_000;
const ROUTER_MESSAGES = 6_000;
const INSERT_BODY = Buffer.from(BSON.serialize({ insert: 'fuzz', $db: 'fuzz' }));

function corpusDecodeErrors(): Buffer[] {
  const out: Buffer[] = [];
  for (const file of readdirSync(CORPUS).filter((f) => f.endsWith('.json'))) {
    const spec = JSON.parse(readFileSync(path.join(CORPUS, file), 'utf8')) as { decodeErrors?: { bson: string }[] };
    for (const e of spec.decodeErrors ?? []) out.push(Buffer.from(e.bson, 'hex'));
  }
  return out;
}

const VALID_BODIES = [
  { ping: 1, $db: 'admin' },
  { insert: 'fuzz', documents: [{ a: 1, b: 'x', c: [1, 2, { d: null }] }], $db: 'fuzz' },
  { find: 'fuzz', filter: { a: { $gt: 0 } }, sort: { a: 1 }, $db: 'fuzz' },
  { update: 'fuzz', updates: [{ q: { a: 1 }, u: { $set: { b: 'y' } } }], $db: 'fuzz' },
  { aggregate: 'fuzz', pipeline: [{ $match: {} }, { $group: { _id: '$a', n: { $sum: 1 } } }], cursor: {}, $db: 'fuzz' },
  { createIndexes: 'fuzz', indexes: [{ key: { a: 1 }, name: 'a_1' }], $db: 'fuzz' },
].map((b) => Buffer.from(BSON.serialize(b)));

// A BinData subtype 7 (a BSON column) whose payload is a document holding another column, and so
// on `wraps` times, around a document nested `levels` deep: the CVE-2026-9740 shape, where
// validating a column recursed into the columns and documents it claims to hold.
function columnOfColumns(wraps: number, levels: number): Binary {
  let payload = nestedDocument(levels);
  for (let i = 0; i < wraps; i++) payload = Buffer.from(BSON.serialize({ '': new Binary(payload, 7) }));
  return new Binary(payload, 7);
}

function opQueryPayload(query: Buffer): Buffer {
  return Buffer.concat([Buffer.alloc(4), Buffer.from('admin.$cmd\0'), Buffer.alloc(8), query]);
}

// Documents nested beyond MongoDB's 200 levels, as a command body, a field of one, a document of a
// sequence and a legacy hello, up to a million levels (the message size limit allows about six),
// and columns of columns.
function deepMessages(): Buffer[] {
  const messages: Buffer[] = [];
  for (const levels of [201, 5_000, 1_000_000]) {
    messages.push(frame(2013, 1, opMsgPayload(nestedDocument(levels))));
    messages.push(frame(2013, 1, opMsgPayload(withDocumentField({ find: 'fuzz', $db: 'fuzz' }, 'filter', nestedDocument(levels)))));
    messages.push(frame(2013, 1, sequencePayload(INSERT_BODY, 'documents', withDocumentField({ _id: levels }, 'x', nestedDocument(levels)))));
    messages.push(frame(2004, 1, opQueryPayload(withDocumentField({ hello: 1 }, 'x', nestedDocument(levels)))));
  }
  const column = columnOfColumns(1_000, 10_000);
  messages.push(frame(2013, 1, opMsgPayload(Buffer.from(BSON.serialize({ find: 'fuzz', filter: { c: column }, $db: 'fuzz' })))));
  messages.push(frame(2013, 1, sequencePayload(INSERT_BODY, 'documents', Buffer.from(BSON.serialize({ c: column })))));
  return messages;
}

// The prober's connections negotiate both compressors, so compressed messages reach decompression.
const HELLO = frame(2013, 1, opMsgPayload(Buffer.from(BSON.serialize({ hello: 1, compression: ['zlib', 'snappy'], $db: 'admin' }))));

// `body` in an OP_COMPRESSED message (zlib or snappy), then maybe with its declared size off (the
// MongoBleed shape: more declared than inflates), its compressor id changed, or its bytes mangled.
function compressedMessage(body: Buffer, next: () => number): Buffer {
  const inner = opMsgPayload(body);
  const snappy = next() < 0.5;
  const data = snappy ? snappyCompress(inner) : zlib.deflateSync(inner);
  const head = Buffer.alloc(9);
  head.writeInt32LE(2013, 0);
  head.writeInt32LE(inner.length, 4);
  head[8] = snappy ? 1 : 2;
  const message = frame(2012, 1, Buffer.concat([head, data]));
  switch (Math.floor(next() * 4)) {
    case 0: return message;
    case 1: message.writeInt32LE(inner.length + [1, 16, 4096, 47_000_000, -inner.length - 1][Math.floor(next() * 5)]!, 20); return message;
    case 2: message[24] = Math.floor(next() * 256); return message;
    default: return mutate(message, next, 16);
  }
}

// Every BSON corpus decode error as a command body, as a document sequence and in an OP_QUERY,
// the deep messages, then random, mutated and compressed messages up to `total`.
function badMessages(next: () => number, total: number): Buffer[] {
  const corpus = corpusDecodeErrors();
  assert.ok(corpus.length >= 70, 'the BSON corpus decode errors are present');
  const messages: Buffer[] = [];
  for (const bad of corpus) {
    messages.push(frame(2013, 1, opMsgPayload(bad)));
    messages.push(frame(2013, 1, sequencePayload(INSERT_BODY, 'documents', bad)));
    messages.push(frame(2004, 1, opQueryPayload(bad)));
  }
  messages.push(...deepMessages());
  while (messages.length < total) {
    const kind = Math.floor(next() * 6);
    const body = VALID_BODIES[Math.floor(next() * VALID_BODIES.length)]!;
    if (kind === 0) {
      const len = Math.floor(next() * 200);
      messages.push(frame([2013, 2004, 2012, 1, 9999][Math.floor(next() * 5)]!, 1, Buffer.from(Array.from({ length: len }, () => Math.floor(next() * 256)))));
    } else if (kind === 1) {
      messages.push(frame(2013, 1, opMsgPayload(mutate(body, next))));
    } else if (kind === 2) {
      // The length field stays intact here: garbage lengths are the framer's case, covered above.
      messages.push(mutate(frame(2013, 1, opMsgPayload(body)), next, 4));
    } else if (kind === 3) {
      messages.push(frame(2013, 1, opMsgPayload(body, Math.floor(next() * 4) === 0 ? Math.floor(next() * 0xffffffff) : 0)));
    } else if (kind === 4) {
      messages.push(frame(2013, 1, sequencePayload(INSERT_BODY, ['documents', 'updates', 'x'][Math.floor(next() * 3)]!, mutate(body, next))));
    } else {
      messages.push(compressedMessage(body, next));
    }
  }
  return messages;
}

// The driver's insertOne and findOne on a sharded collection, as the router's message-level fast
// paths read them from the bytes (src/router/insert_fast_path.ts, find_fast_path.ts), then
// mutated after the header or cut short with a length that matches the cut.
function fastPathMessages(next: () => number, total: number): Buffer[] {
  const lsid = { id: new Binary(Buffer.alloc(16, 7), Binary.SUBTYPE_UUID) };
  const messages: Buffer[] = [];
  for (let i = 0; messages.length < total; i++) {
    const k = i % 100;
    const shapes = [
      () => frame(2013, 1, sequencePayload(Buffer.from(BSON.serialize({ insert: 'fuzz', ordered: true, lsid, txnNumber: Long.fromNumber(i + 1), $db: 'fuzz' })), 'documents', Buffer.from(BSON.serialize({ _id: 1000 + i, k })))),
      () => frame(2013, 1, opMsgPayload(Buffer.from(BSON.serialize({ insert: 'fuzz', documents: [{ _id: 1000 + i, k }], ordered: true, lsid, $db: 'fuzz' })))),
      () => frame(2013, 1, opMsgPayload(Buffer.from(BSON.serialize({ find: 'fuzz', filter: { k }, limit: 1, singleBatch: true, lsid, $db: 'fuzz' })))),
    ];
    const good = shapes[Math.floor(next() * shapes.length)]!();
    if (next() < 0.75) {
      messages.push(mutate(good, next, 16));
    } else {
      const cut = Buffer.from(good.subarray(0, 16 + Math.floor(next() * (good.length - 16))));
      cut.writeInt32LE(cut.length, 0);
      messages.push(cut);
    }
  }
  return messages;
}

// `levels` documents each inside the last around {b: 1}.
function nestedValue(levels: number): AnyDoc {
  let value: AnyDoc = { b: 1 };
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

const OVERFLOW = { code: 15, codeName: 'Overflow' };

// MongoDB's nesting limits as a client meets them on `port` (a node or a router) and through the
// driver's `coll`: 200 levels below a received document, 180 levels in a stored one (counting its
// top level, as mongod does).
async function checkDepthLimits(port: number, coll: Collection<AnyDoc>): Promise<void> {
  const find = (levels: number) => frame(2013, 7, opMsgPayload(withDocumentField({ find: coll.collectionName, $db: coll.dbName }, 'filter', nestedDocument(levels))));
  // The filter is the body's level 2: 199 more stay within 200 below the body.
  assert.equal((await exchange(port, find(199)))?.ok, 1);
  for (const levels of [200, 1_000_000]) {
    assert.deepEqual(await exchange(port, find(levels)), { ok: 0, errmsg: 'BSONObj exceeds maximum nested object depth', ...OVERFLOW });
  }
  const hello = await exchange(port, frame(2004, 8, opQueryPayload(withDocumentField({ hello: 1 }, 'x', nestedDocument(1_000_000)))));
  assert.deepEqual(hello, { ok: 0, errmsg: 'BSONObj exceeds maximum nested object depth', ...OVERFLOW });

  // {_id, k, x} puts x's document at level 2 and the innermost {b: 1} at level 2 + its wrappers
  // (k: the router's collection is sharded on it).
  await coll.insertOne({ _id: 'deep-178', k: -1, x: nestedValue(178) });
  await assert.rejects(coll.insertOne({ _id: 'deep-179', k: -1, x: nestedValue(179) }), { ...OVERFLOW, errmsg: 'cannot insert document because it exceeds 180 levels of nesting' });
  await assert.rejects(coll.updateOne({ _id: 'deep-178', k: -1 }, { $set: { y: nestedValue(179) } }), { ...OVERFLOW, errmsg: 'Document exceeds maximum nesting depth of 180' });
  await assert.rejects(coll.updateOne({ _id: 'deep-new', k: -1 }, { $set: { x: nestedValue(179) } }, { upsert: true }), { ...OVERFLOW, errmsg: 'Document exceeds maximum nesting depth of 180' });
  assert.deepEqual(await coll.findOne({ _id: 'deep-178' }), { _id: 'deep-178', k: -1, x: nestedValue(178) });
  assert.equal(await coll.countDocuments({ _id: { $in: ['deep-179', 'deep-new'] } }), 0);

  // docshard reads no BSON column (it has no time-series collections): one is stored as bytes.
  const column = columnOfColumns(1_000, 10_000);
  await coll.insertOne({ _id: 'column', k: -1, c: column });
  const stored = await coll.findOne({ _id: 'column' });
  assert.ok(Buffer.from((stored?.c as Binary).buffer).equals(Buffer.from(column.buffer)));
  await coll.deleteMany({ _id: { $in: ['deep-178', 'column'] } });
}

describe('bad input never crashes a node or a router', () => {
  it(`a node survives ${MESSAGES} random and mutated messages and every BSON corpus decode error, compressed ones among them, and holds to MongoDB's nesting limits`, { timeout: 600_000, skip: skipWithoutDriverSpecs(CORPUS_DIR) }, async () => {
    const node = await spawnNode();
    const client = new MongoClient(node.uri);
    try {
      const seeded = client.db('fuzzcheck').collection<AnyDoc>('keep');
      await seeded.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, v: `value-${i}` })));
      const prober = new Prober(node.port, HELLO);
      let pingId = 1_000_000;
      for (const m of badMessages(rng(20261122), MESSAGES)) await prober.probe(m, pingId++);
      prober.close();
      assert.ok(prober.replies > 0);
      assert.equal(prober.malformedReplies, 0, 'every reply is one whole BSON document');

      await checkDepthLimits(node.port, client.db('fuzzcheck').collection<AnyDoc>('deep'));
      const ping = await client.db('admin').command({ ping: 1 });
      assert.equal(ping.ok, 1);
      const kept = await seeded.find({}).sort({ _id: 1 }).toArray();
      assert.equal(kept.length, 100);
      assert.deepEqual(kept[42], { _id: 42, v: 'value-42' });
    } finally {
      await client.close();
      await node.stop();
      removeDir(node.dbpath);
    }
  });

  it(`a router survives ${ROUTER_MESSAGES} bad messages, half of them mangled fast-path inserts and point reads, writes no orphan, and holds to MongoDB's nesting limits`, { timeout: 600_000, skip: skipWithoutDriverSpecs(CORPUS_DIR) }, async () => {
    const cluster = await spawnCluster({ shards: 2 });
    const router = cluster.routers[0]!;
    const client = new MongoClient(router.uri);
    const shardClients = cluster.shards.map((s) => new MongoClient(s.uri));
    try {
      const admin = client.db('admin');
      await admin.command({ enableSharding: 'fuzz', primaryShard: 'shard0' });
      await admin.command({ shardCollection: 'fuzz.fuzz', key: { k: 1 } });
      await admin.command({ split: 'fuzz.fuzz', middle: { k: 50 } });
      await admin.command({ moveChunk: 'fuzz.fuzz', find: { k: 50 }, to: 'shard1' });
      const coll = client.db('fuzz').collection<AnyDoc>('fuzz');
      await coll.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, k: i, v: `value-${i}` })));

      const next = rng(20261125);
      const messages = [...badMessages(next, ROUTER_MESSAGES / 2), ...fastPathMessages(next, ROUTER_MESSAGES / 2)];
      const prober = new Prober(router.port, HELLO);
      let pingId = 1_000_000;
      for (const m of messages) await prober.probe(m, pingId++);
      prober.close();
      assert.ok(prober.replies > ROUTER_MESSAGES / 2);
      assert.equal(prober.malformedReplies, 0, 'every reply is one whole BSON document');

      await checkDepthLimits(router.port, coll);
      assert.equal((await admin.command({ ping: 1 })).ok, 1);
      assert.deepEqual(await coll.findOne({ k: 42, v: { $exists: true } }), { _id: 42, k: 42, v: 'value-42' });
      assert.equal(await coll.countDocuments({ v: { $exists: true } }), 100);
      // Whatever the mangled inserts wrote went to the shard owning its key: the shards hold, counted
      // directly, exactly what the router counts through their ownership filters.
      const onShards = await Promise.all(shardClients.map((c) => c.db('fuzz').collection('fuzz').countDocuments({})));
      assert.equal(onShards[0]! + onShards[1]!, await coll.countDocuments({}));
      assert.ok(onShards[0]! > 50 && onShards[1]! > 50, `both shards took writes: ${onShards.join(', ')}`);
    } finally {
      await Promise.all([client.close(), ...shardClients.map((c) => c.close())]);
      await cluster.stop();
    }
  });
});
