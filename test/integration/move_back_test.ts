import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 18 part 2: a range moves straight back onto a shard that still holds its orphans. With
// the default orphanCleanupDelaySecs (900 s), one chunk goes A → B → A → C → A → B … ten times
// under 4 writers and 2 readers through 2 routers: every move succeeds, no write fails, no scan sees
// an _id twice, and the contents end equal to a model of the acknowledged writes.
const NS = 'mb.c';
const N = 3000;
const WRITERS = 4;
const PATH = ['shard1', 'shard0', 'shard2', 'shard0', 'shard1', 'shard0', 'shard2', 'shard0', 'shard1', 'shard0'];

interface Doc { _id: number | string; k: number; v: number }

function errText(err: unknown): string {
  const e = err as { codeName?: string; code?: number; message?: string };
  return `${e.codeName ?? e.code ?? 'error'}: ${e.message ?? String(err)}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('a range moves straight back to the shard that holds its orphans', () => {
  let cluster: SpawnedCluster;
  const routers: MongoClient[] = [];

  withCluster({ shards: 3, routers: 2 }, async (f) => {
    cluster = f.cluster;
    for (const r of cluster.routers) routers.push(f.connect(r.uri));
    const admin = routers[0]!.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'mb', primaryShard: 'shard0' });
    await admin.command({ shardCollection: NS, key: { k: 1 } });
    await admin.command({ split: NS, middle: { k: 1000 } });
    await admin.command({ split: NS, middle: { k: 2000 } });
    await routers[0]!.db('mb').collection<Doc>('c').insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, k: i, v: 0 })));
  });

  it('ten moves of [1000, 2000) in a row under writers and readers all succeed', { timeout: 300_000 }, async () => {
    const coll = (r: number) => routers[r]!.db('mb').collection<Doc>('c');
    // Writer w owns the base ids with id % WRITERS === w and the ids it inserts.
    const models = Array.from({ length: WRITERS }, (_, w) => {
      const m = new Map<number | string, Doc>();
      for (let i = w; i < N; i += WRITERS) m.set(i, { _id: i, k: i, v: 0 });
      return m;
    });
    const failures: string[] = [];
    let stop = false;

    const writer = async (w: number): Promise<void> => {
      const c = coll(w % 2);
      const model = models[w]!;
      let n = 0;
      let seed = 7 + w * 31;
      const rand = (m: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return (seed >>> 8) % m; };
      while (!stop) {
        n++;
        const op = rand(4);
        // Most writes land in the moving range.
        const k = rand(10) < 8 ? 1000 + rand(1000) : rand(3000);
        try {
          if (op < 2) {
            const doc = { _id: `w${w}-${n}`, k, v: n };
            await c.insertOne({ ...doc });
            model.set(doc._id, doc);
          } else {
            const ids = [...model.keys()];
            const d = model.get(ids[rand(ids.length)]!)!;
            if (op === 2) {
              const r = await c.updateOne({ k: d.k, _id: d._id }, { $set: { v: n } });
              if (r.matchedCount !== 1) failures.push(`writer ${w}: update ${String(d._id)} matched ${r.matchedCount}`);
              d.v = n;
            } else {
              const r = await c.deleteOne({ k: d.k, _id: d._id });
              if (r.deletedCount !== 1) failures.push(`writer ${w}: delete ${String(d._id)} deleted ${r.deletedCount}`);
              model.delete(d._id);
            }
          }
        } catch (err) {
          failures.push(`writer ${w}: ${errText(err)}`);
          return;
        }
      }
    };

    const scans = [0, 0];
    const reader = async (r: number): Promise<void> => {
      while (!stop) {
        try {
          const ids = (await coll(r).find({}, { projection: { _id: 1 }, batchSize: 500 }).toArray()).map((d) => String(d._id));
          if (new Set(ids).size !== ids.length) failures.push(`reader ${r}: an _id seen twice in one scan`);
          scans[r]! += 1;
        } catch (err) {
          failures.push(`reader ${r}: ${errText(err)}`);
          return;
        }
      }
    };

    const workers = [...Array.from({ length: WRITERS }, (_, w) => writer(w)), reader(0), reader(1)];
    const moves: string[] = [];
    try {
      for (const [i, to] of PATH.entries()) {
        await sleep(300);
        try {
          await routers[i % 2]!.db('admin').command({ moveChunk: NS, find: { k: 1500 }, to });
          moves.push(to);
        } catch (err) {
          failures.push(`move ${i + 1} to ${to}: ${errText(err)}`);
          break;
        }
      }
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(moves, PATH, 'every move succeeded');
    assert.ok(scans[0]! > 0 && scans[1]! > 0, `readers scanned: ${scans.join(', ')}`);

    const expected = models.flatMap((m) => [...m.values()]).sort((a, b) => String(a._id).localeCompare(String(b._id)));
    for (const r of [0, 1]) {
      const got = (await coll(r).find({}).toArray()).sort((a, b) => String(a._id).localeCompare(String(b._id)));
      assert.deepEqual(got, expected, `contents through router ${r} equal the model`);
    }
    // The shard that received the range back deleted its orphans first; the expedited deletions
    // are counted.
    const shard0 = new MongoClient(cluster.shards[0]!.uri);
    try {
      const status = await shard0.db('admin').command({ serverStatus: 1 });
      assert.ok(status.shardingStatistics.docshard.rangeDeletions.expedited >= 4, JSON.stringify(status.shardingStatistics.docshard.rangeDeletions));
    } finally {
      await shard0.close();
    }
  });
});
