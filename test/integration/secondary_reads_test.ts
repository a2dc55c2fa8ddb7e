import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// Issue 32: reads through a router with a secondary read preference go to the shards' secondaries
// (the router passes the read preference on; its network picks the member), and a secondary
// filters orphans as its primary does: a range that just moved away, whose documents the donor's
// members still hold (orphanCleanupDelaySecs keeps them), is read once, from the recipient. A
// router whose routing table predates the move is turned away by the donor's secondary, which
// forgot its metadata when it applied the migration's decision, and reads the moved range where
// it now lives.
const DOCS = 100;
const KEEP_ORPHANS = ['--setParameter', 'orphanCleanupDelaySecs=3600'];

describe('secondary reads through a router over shards that are replica sets', () => {
  const sets: SpawnedReplicaSet[] = [];
  let fresh: MongoClient;
  let stale: MongoClient;

  withProcesses(async (p) => {
    const config = await p.node({ role: 'config' });
    for (const name of ['rs0', 'rs1']) sets.push(await p.replicaSet({ name, members: 3, node: () => ({ extraArgs: KEEP_ORPHANS }) }));
    fresh = p.connect((await p.router(config.port)).uri);
    stale = p.connect((await p.router(config.port)).uri);
    const admin = fresh.db('admin');
    for (const set of sets) await admin.command({ addShard: `${set.name}/${set.hosts.join(',')}` });
    await admin.command({ enableSharding: 'app', primaryShard: 'rs0' });
    await admin.command({ shardCollection: 'app.items', key: { k: 1 } });
    await admin.command({ split: 'app.items', middle: { k: DOCS / 2 } });
    await fresh.db('app').collection<AnyDoc>('items').insertMany(Array.from({ length: DOCS }, (_, k) => ({ _id: k, k })), { writeConcern: { w: 3 } });
  });

  // How many queries each member of a set has answered (serverStatus opcounters).
  async function queriesBySecondaries(clients: MongoClient[]): Promise<number> {
    let n = 0;
    for (const c of clients) {
      const status = await c.db('admin').command({ serverStatus: 1 });
      if ((status.repl as AnyDoc).secondary === true) n += Number((status.opcounters as AnyDoc).query);
    }
    return n;
  }

  it("reads a range that just moved away once, from the secondaries, through a fresh and a stale router", { timeout: 180_000 }, async (t) => {
    const members = sets.flatMap((s) => s.hosts.map((h) => new MongoClient(`mongodb://${h}/?directConnection=true`)));
    try {
      const read = (router: MongoClient) => router.db('app').collection<AnyDoc>('items').find({}, { readPreference: 'secondary' }).toArray();
      // The stale router caches the table with every chunk on rs0.
      assert.equal((await read(stale)).length, DOCS);
      await fresh.db('admin').command({ moveChunk: 'app.items', find: { k: DOCS / 2 }, to: 'rs1', _secondaryThrottle: true });
      // The donor's members still hold the moved documents, as orphans.
      const donorSecondary = members.slice(0, 3);
      await until('the orphans on every donor member', async () => {
        for (const m of donorSecondary) if ((await m.db('app').collection('items').countDocuments({}, { readPreference: 'secondaryPreferred' } as AnyDoc)) !== DOCS) return undefined;
        return true;
      });

      const before = await queriesBySecondaries(members);
      for (const [name, router] of [['fresh', fresh], ['stale', stale]] as const) {
        const docs = await read(router);
        const ids = docs.map((d) => d._id as number).sort((a, b) => a - b);
        assert.deepEqual(ids, Array.from({ length: DOCS }, (_, k) => k), `the ${name} router's secondary read`);
        assert.equal(await router.db('app').collection('items').countDocuments({}, { readPreference: 'secondary' }), DOCS, `the ${name} router's secondary count`);
      }
      const after = await queriesBySecondaries(members);
      t.diagnostic(`secondaries answered ${after - before} queries`);
      assert.ok(after - before >= 4, `the reads went to secondaries (${after - before} queries there)`);
    } finally {
      await Promise.all(members.map((m) => m.close()));
    }
  });
});
