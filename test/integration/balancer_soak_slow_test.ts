import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { FAST_BALANCER_ARGS, waitFor } from '../helpers/balancer_util.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 5's soak: writers (inserts, updates, deletes on ids each owns, modelled) and readers
// (full scans) through two routers while the balancer moves data by size (1 MB chunks) and, half
// way, drains a shard with removeShard until it completes. Readers never see an _id twice nor a
// document whose delete was acknowledged; at the end counts and contents equal the model and
// every document is on exactly one shard. DOCSHARD_SOAK_SECONDS sets how long the writers run (25 s;
// longer by hand, test/README.md); the drain starts half way and the writers go on until it ends.
const SECONDS = Number(process.env.DOCSHARD_SOAK_SECONDS ?? '25');
const DURATION_MS = (Number.isFinite(SECONDS) && SECONDS > 0 ? SECONDS : 25) * 1000;
const NS = 'bsoak.c';
const N = 6000;
const WRITERS = 4;
const PAD = 'q'.repeat(1000);

interface Doc { _id: number | string; k: number; v: number; pad?: string }

function errText(err: unknown): string {
  const e = err as { codeName?: string; code?: number; message?: string };
  return `${e.codeName ?? e.code ?? 'error'}: ${e.message ?? String(err)}`;
}

describe('balancer soak with a draining shard (issue 5)', () => {
  let cluster: SpawnedCluster;
  const routers: MongoClient[] = [];

  withCluster({ shards: 3, routers: 2, configArgs: FAST_BALANCER_ARGS, shardArgs: ['--setParameter', 'orphanCleanupDelaySecs=1'] }, async (f) => {
    cluster = f.cluster;
    for (const r of cluster.routers) routers.push(f.connect(r.uri));
  });

  it(`writers and readers for ${DURATION_MS / 1000} s while the balancer runs and shard2 drains`, { timeout: DURATION_MS + 300_000 }, async () => {
    const admin = routers[0]!.db('admin');
    const config = routers[0]!.db('config');
    await admin.command({ balancerStop: 1 });
    await config.collection('settings').updateOne({ _id: 'chunksize' as never }, { $set: { value: 1 } }, { upsert: true });
    await admin.command({ enableSharding: 'bsoak', primaryShard: 'shard0' });
    await admin.command({ shardCollection: NS, key: { k: 1 } });
    const coll = (r: number) => routers[r]!.db('bsoak').collection<Doc>('c');
    for (let i = 0; i < N; i += 1000) {
      await coll(0).insertMany(Array.from({ length: 1000 }, (_, j) => ({ _id: i + j, k: 2 * (i + j), v: 0, pad: PAD })), { ordered: false });
    }
    await admin.command({ balancerStart: 1 });

    const models: Map<number | string, Doc>[] = Array.from({ length: WRITERS }, (_, w) => {
      const m = new Map<number | string, Doc>();
      for (let i = w; i < N; i += WRITERS) m.set(i, { _id: i, k: 2 * i, v: 0 });
      return m;
    });
    const deleteIssued = new Set<number | string>();
    const deleteAcked = new Set<number | string>();
    let stop = false;
    const failures: string[] = [];
    const writeErrors: string[] = [];
    let ops = 0;
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

    const writer = async (w: number): Promise<void> => {
      const c = coll(w % 2);
      const model = models[w]!;
      let n = 0;
      let seed = 4242 + w * 7919;
      const rand = (m: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return (seed >>> 8) % m; };
      const pick = (): Doc | undefined => {
        let skip = rand(Math.max(1, model.size));
        for (const d of model.values()) if (skip-- === 0) return d;
        return undefined;
      };
      while (!stop) {
        n++;
        const op = rand(10);
        let desc = '';
        try {
          if (op < 4) {
            const doc: Doc = { _id: `w${w}-${n}`, k: rand(2 * N), v: n };
            desc = `insert ${doc._id}`;
            await c.insertOne({ ...doc, pad: PAD });
            model.set(doc._id, doc);
          } else if (op < 7) {
            const d = pick();
            if (!d) continue;
            desc = `update ${d._id}`;
            const r = op < 6 ? await c.updateOne({ _id: d._id }, { $inc: { v: 1 } }) : await c.updateOne({ k: d.k, _id: d._id }, { $inc: { v: 1 } });
            if (r.matchedCount !== 1) failures.push(`writer ${w}: ${desc} matched ${r.matchedCount}`);
            d.v++;
          } else {
            const d = pick();
            if (!d) continue;
            desc = `delete ${d._id}`;
            deleteIssued.add(d._id);
            const r = op < 9 ? await c.deleteOne({ _id: d._id }) : await c.deleteOne({ k: d.k, _id: d._id });
            if (r.deletedCount !== 1) failures.push(`writer ${w}: ${desc} deleted ${r.deletedCount}`);
            model.delete(d._id);
            deleteAcked.add(d._id);
          }
          ops++;
        } catch (err) {
          writeErrors.push(`writer ${w}: ${desc}: ${errText(err)}`);
          await sleep(50);
        }
      }
    };

    let scans = 0;
    const reader = async (r: number): Promise<void> => {
      while (!stop) {
        const mustAppear = new Set<number | string>();
        for (const m of models) for (const id of m.keys()) if (!deleteIssued.has(id)) mustAppear.add(id);
        const mustNot = new Set(deleteAcked);
        let ids: (number | string)[];
        try {
          ids = (await coll(r).find({}, { projection: { _id: 1 }, batchSize: 1000 }).toArray()).map((d) => d._id);
        } catch (err) {
          failures.push(`reader ${r}: scan failed: ${errText(err)}`);
          await sleep(100);
          continue;
        }
        scans++;
        const seen = new Set<number | string>();
        for (const id of ids) {
          if (seen.has(id)) failures.push(`reader ${r}: _id ${String(id)} seen twice`);
          seen.add(id);
          if (mustNot.has(id)) failures.push(`reader ${r}: _id ${String(id)} seen after its delete was acknowledged`);
        }
        for (const id of mustAppear) if (!seen.has(id) && !deleteIssued.has(id)) failures.push(`reader ${r}: _id ${String(id)} missing`);
        if (failures.length > 50) return;
      }
    };

    let chunksToDrain = 0;
    const drain = async (): Promise<string[]> => {
      await sleep(DURATION_MS / 2);
      chunksToDrain = await config.collection('chunks').countDocuments({ shard: 'shard2' });
      const states: string[] = [];
      for (;;) {
        const reply = await admin.command({ removeShard: 'shard2' });
        if (states[states.length - 1] !== reply.state) states.push(String(reply.state));
        if (reply.state === 'completed') return states;
        await sleep(250);
      }
    };

    const workers = [
      ...Array.from({ length: WRITERS }, (_, w) => writer(w)),
      reader(0), reader(1),
    ];
    const draining = drain();
    await sleep(DURATION_MS);
    const states = await waitFor('shard2 to finish draining', async () => (await Promise.race([draining, sleep(200).then(() => undefined)])), 240_000);
    stop = true;
    await Promise.all(workers);

    assert.deepEqual(writeErrors, [], 'every write was acknowledged');
    assert.deepEqual(failures, []);
    // A fast machine may drain shard2's few chunks between two polls, so 'ongoing' may not be seen.
    assert.ok(chunksToDrain > 0, 'shard2 had chunks to drain');
    assert.match(states.join(', '), /^started, (ongoing, )?completed$/);
    assert.ok(scans > 0 && ops > 100, `work was done: ${scans} scans, ${ops} writes`);
    const moves = await config.collection('changelog').countDocuments({ what: 'moveChunk.commit', ns: NS });
    assert.ok(moves > 0, 'the balancer moved data');

    const expected = models.flatMap((m) => [...m.values()]).map((d) => ({ _id: d._id, k: d.k, v: d.v }));
    expected.sort((a, b) => String(a._id).localeCompare(String(b._id)));
    for (const r of [0, 1]) {
      assert.equal(await coll(r).countDocuments(), expected.length);
      const actual = (await coll(r).find({}, { projection: { pad: 0 } }).toArray()) as AnyDoc[];
      actual.sort((a, b) => String(a._id).localeCompare(String(b._id)));
      assert.deepEqual(actual, expected);
    }
    const shards = (await admin.command({ listShards: 1 })).shards as AnyDoc[];
    assert.deepEqual(shards.map((s) => s._id), ['shard0', 'shard1']);
    const uuid = (await config.collection<AnyDoc>('collections').findOne({ _id: NS }))!.uuid;
    assert.equal(await config.collection('chunks').countDocuments({ uuid, shard: 'shard2' }), 0);
    process.stdout.write(`# balancer soak: ${ops} writes, ${scans} scans, ${moves} migrations, drain states ${states.join(' -> ')}\n`);
  });
});
