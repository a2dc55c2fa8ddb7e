import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Binary, BSON, Long } from 'bson';
import { MongoClient } from 'mongodb';
import { spawnCluster } from '../helpers/spawn_cluster.js';
import { removeDir, spawnNode, type AnyDoc } from '../helpers/spawn_node.js';
import { frame, mutate, opMsgPayload, Prober, rng, sequencePayload } from '../helpers/wire_fuzz.js';

const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/compat/specs/bson-corpus/tests');
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

// Every BSON corpus decode error as a command body, as a document sequence and in an OP_QUERY,
// then random and mutated messages up to `total`.
function badMessages(next: () => number, total: number): Buffer[] {
  const corpus = corpusDecodeErrors();
  assert.ok(corpus.length >= 70, 'the BSON corpus decode errors are present');
  const messages: Buffer[] = [];
  for (const bad of corpus) {
    messages.push(frame(2013, 1, opMsgPayload(bad)));
    messages.push(frame(2013, 1, sequencePayload(INSERT_BODY, 'documents', bad)));
    messages.push(frame(2004, 1, Buffer.concat([Buffer.alloc(4), Buffer.from('admin.$cmd\0'), Buffer.alloc(8), bad])));
  }
  while (messages.length < total) {
    const kind = Math.floor(next() * 5);
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
    } else {
      messages.push(frame(2013, 1, sequencePayload(INSERT_BODY, ['documents', 'updates', 'x'][Math.floor(next() * 3)]!, mutate(body, next))));
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

describe('bad input never crashes a node or a router', () => {
  it(`a node survives ${MESSAGES} random and mutated messages and every BSON corpus decode error`, { timeout: 600_000 }, async () => {
    const node = await spawnNode();
    const client = new MongoClient(node.uri);
    try {
      const seeded = client.db('fuzzcheck').collection<AnyDoc>('keep');
      await seeded.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, v: `value-${i}` })));
      const prober = new Prober(node.port);
      let pingId = 1_000_000;
      for (const m of badMessages(rng(20261122), MESSAGES)) await prober.probe(m, pingId++);
      prober.close();
      assert.ok(prober.replies > 0);

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

  it(`a router survives ${ROUTER_MESSAGES} bad messages, half of them mangled fast-path inserts and point reads, and writes no orphan`, { timeout: 600_000 }, async () => {
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
      const prober = new Prober(router.port);
      let pingId = 1_000_000;
      for (const m of messages) await prober.probe(m, pingId++);
      prober.close();
      assert.ok(prober.replies > ROUTER_MESSAGES / 2);

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
