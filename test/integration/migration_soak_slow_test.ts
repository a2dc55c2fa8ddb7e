import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Concurrency soak of issue 4: 4 writers (inserts, updates, deletes on ids they alone own, with a
// model of acknowledged writes), readers doing full scans through 2 routers, and 2 movers sending
// the 6 chunks of a collection among 3 shards, for DOCSHARD_SOAK_SECONDS (30 by default). Readers
// never see an _id twice; at quiet points (writers parked) counts and contents equal the model;
// at the end the router's contents equal the model and every document is on exactly one shard.
//
// The movers do not wait for range deletions: donated ranges are deleted after
// orphanCleanupDelaySecs, lowered to 1 s on the shards (MongoDB's own soak suites lower it too), so
// deletions run alongside the next migrations. A move onto a shard that still holds orphans of an
// overlapping range deletes them first; one refused (ConflictingOperationInProgress: the scans
// held the range past receiveChunkWaitForRangeDeleterTimeoutMS) is counted like the others.
//
// In 30 s it still moves chunks dozens of times, has moves refused, deletes ranges beside the next
// migrations and stops the writers for 3 quiet points (every quarter of the run, at most 15 s
// apart); longer runs are for by hand (test/README.md). A busy machine gets through fewer moves in
// that time, so the run goes on, up to 3 times as long, until MIN_MOVES moves are done.
const SECONDS = Number(process.env.DOCSHARD_SOAK_SECONDS ?? '30');
const DURATION_MS = (Number.isFinite(SECONDS) && SECONDS > 0 ? SECONDS : 30) * 1000;
const MAX_DURATION_MS = 3 * DURATION_MS;
const MIN_MOVES = 20;
const QUIET_EVERY_MS = Math.min(15_000, Math.max(2_000, DURATION_MS / 4));
const NS = 'soak.c';
const N = 3000; // base documents: _id i, k 2i, so k spans [0, 6000)
const SPLITS = [1000, 2000, 3000, 4000, 5000];
const WRITERS = 4;

interface Doc { _id: number | string; k: number; v: number }

function sortDocs(docs: Doc[]): Doc[] {
  return docs.sort((a, b) => a.k - b.k || String(a._id).localeCompare(String(b._id)));
}

function errText(err: unknown): string {
  const e = err as { codeName?: string; code?: number; message?: string };
  return `${e.codeName ?? e.code ?? 'error'}: ${e.message ?? String(err)}`;
}

describe('migration soak (issue 4)', () => {
  let cluster: SpawnedCluster;
  const routers: MongoClient[] = [];
  const direct: MongoClient[] = [];

  withCluster({ shards: 3, routers: 2, shardArgs: ['--setParameter', 'orphanCleanupDelaySecs=1'] }, async (f) => {
    cluster = f.cluster;
    for (const r of cluster.routers) routers.push(f.connect(r.uri));
    for (const s of cluster.shards) direct.push(f.connect(s.uri));
  });

  it(`writers, readers and movers for ${DURATION_MS / 1000} s and ${MIN_MOVES} moves or more; the cluster equals the model`, { timeout: MAX_DURATION_MS + 240_000 }, async () => {
    const admin = routers[0]!.db('admin');
    await admin.command({ enableSharding: 'soak', primaryShard: 'shard0' });
    await admin.command({ shardCollection: NS, key: { k: 1 } });
    for (const k of SPLITS) await admin.command({ split: NS, middle: { k } });
    const coll = (r: number) => routers[r]!.db('soak').collection<Doc>('c');
    await coll(0).insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, k: 2 * i, v: 0 })), { ordered: false });

    // Spread the chunks: chunk i (k in [1000i, 1000i+1000)) on shard i % 3.
    for (let i = 0; i < 6; i++) {
      if (i % 3 !== 0) await admin.command({ moveChunk: NS, find: { k: i * 1000 + 1 }, to: `shard${i % 3}`, _waitForDelete: true });
    }

    // One model per writer (disjoint ids): writer w owns base ids with id % 4 === w and the ids it inserts.
    const models: Map<number | string, Doc>[] = Array.from({ length: WRITERS }, (_, w) => {
      const m = new Map<number | string, Doc>();
      for (let i = w; i < N; i += WRITERS) m.set(i, { _id: i, k: 2 * i, v: 0 });
      return m;
    });
    const modelDocs = (): Doc[] => models.flatMap((m) => [...m.values()]);
    const modelSize = (): number => models.reduce((s, m) => s + m.size, 0);
    // Deletes issued (maybe not yet acknowledged) and acknowledged, for the readers' checks.
    const deleteIssued = new Set<number | string>();
    const deleteAcked = new Set<number | string>();

    let stop = false;
    let pause = false;
    let parked = 0;
    const failures: string[] = [];
    const writeErrors: string[] = [];
    const opsPerWriter = Array.from({ length: WRITERS }, () => ({ insert: 0, updateById: 0, updateByKey: 0, deleteById: 0, deleteByKey: 0 }));

    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

    const writer = async (w: number): Promise<void> => {
      const c = coll(w % 2);
      const model = models[w]!;
      const ops = opsPerWriter[w]!;
      let n = 0;
      let seed = 12345 + w * 7919;
      const rand = (m: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return (seed >>> 8) % m; };
      const pickOwned = (): Doc | undefined => {
        // A random existing document of this writer (base or inserted).
        const size = model.size;
        if (size === 0) return undefined;
        let skip = rand(size);
        for (const d of model.values()) if (skip-- === 0) return d;
        return undefined;
      };
      while (!stop) {
        if (pause) {
          parked++;
          while (pause && !stop) await sleep(5);
          parked--;
          continue;
        }
        n++;
        const op = rand(10);
        let desc = '';
        try {
          if (op < 3) {
            const doc: Doc = { _id: `w${w}-${n}`, k: rand(6000), v: n };
            desc = `insert ${doc._id}`;
            await c.insertOne({ ...doc });
            model.set(doc._id, doc);
            ops.insert++;
          } else if (op < 5) {
            // Update by _id alone: no shard key, sent to every shard.
            const d = pickOwned();
            if (d === undefined) continue;
            desc = `updateOne by _id ${d._id}`;
            const r = await c.updateOne({ _id: d._id }, { $inc: { v: 1 } });
            if (r.matchedCount !== 1 || r.modifiedCount !== 1) failures.push(`writer ${w}: ${desc} matched ${r.matchedCount} modified ${r.modifiedCount}, expected 1`);
            d.v++;
            ops.updateById++;
          } else if (op < 7) {
            const d = pickOwned();
            if (d === undefined) continue;
            desc = `updateOne by key ${d._id}`;
            const r = await c.updateOne({ k: d.k, _id: d._id }, { $set: { v: n } });
            if (r.matchedCount !== 1) failures.push(`writer ${w}: ${desc} matched ${r.matchedCount}, expected 1`);
            d.v = n;
            ops.updateByKey++;
          } else if (op < 8) {
            // Update of an id this writer deleted: must match nothing (no resurrection).
            const gone = w + WRITERS * rand(N / WRITERS);
            if (model.has(gone)) continue;
            desc = `updateOne of deleted ${gone}`;
            const r = await c.updateOne({ _id: gone }, { $inc: { v: 1 } });
            if (r.matchedCount !== 0) failures.push(`writer ${w}: ${desc} matched ${r.matchedCount}, expected 0`);
            ops.updateById++;
          } else {
            const d = pickOwned();
            if (d === undefined) continue;
            const byId = op === 8;
            desc = `deleteOne by ${byId ? '_id' : 'key'} ${d._id}`;
            deleteIssued.add(d._id);
            const r = byId ? await c.deleteOne({ _id: d._id }) : await c.deleteOne({ k: d.k, _id: d._id });
            if (r.deletedCount !== 1) failures.push(`writer ${w}: ${desc} deleted ${r.deletedCount}, expected 1`);
            model.delete(d._id);
            deleteAcked.add(d._id);
            if (byId) ops.deleteById++; else ops.deleteByKey++;
          }
        } catch (err) {
          // Not acknowledged: the outcome is unknown; recorded, and the test fails on it below.
          writeErrors.push(`writer ${w}: ${desc}: ${errText(err)}`);
          await sleep(50);
        }
      }
    };

    const readerStats = { scans: 0, docsSeen: 0 };
    const reader = async (r: number): Promise<void> => {
      const c = coll(r);
      while (!stop) {
        const mustAppear = new Set<number | string>();
        for (const m of models) for (const id of m.keys()) if (!deleteIssued.has(id)) mustAppear.add(id);
        const mustNot = new Set(deleteAcked);
        let ids: (number | string)[];
        try {
          ids = (await c.find({}, { projection: { _id: 1 }, batchSize: 700 }).toArray()).map((d) => d._id);
        } catch (err) {
          failures.push(`reader ${r}: scan failed: ${errText(err)}`);
          await sleep(100);
          continue;
        }
        readerStats.scans++;
        readerStats.docsSeen += ids.length;
        const seen = new Set<number | string>();
        for (const id of ids) {
          if (seen.has(id)) failures.push(`reader ${r}: _id ${String(id)} seen twice in one scan`);
          seen.add(id);
          if (mustNot.has(id)) failures.push(`reader ${r}: _id ${String(id)} seen after its delete was acknowledged`);
        }
        for (const id of mustAppear) {
          if (!seen.has(id) && !deleteIssued.has(id)) failures.push(`reader ${r}: _id ${String(id)} missing from a scan (present before, not deleted)`);
        }
        if (failures.length > 50) return;
      }
    };

    const moveStats = { done: 0, errors: new Map<string, number>() };
    const busy = new Set<number>();
    const chunkOwners = async (): Promise<string[]> => {
      const uuid = (await routers[0]!.db('config').collection<AnyDoc>('collections').findOne({ _id: NS }))!.uuid;
      const chunks = await routers[0]!.db('config').collection<AnyDoc>('chunks').find({ uuid }).sort({ min: 1 }).toArray();
      return chunks.map((c) => String(c.shard));
    };
    const mover = async (m: number): Promise<void> => {
      let seed = 99 + m;
      const rand = (x: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return (seed >>> 8) % x; };
      while (!stop) {
        const chunk = rand(6);
        if (busy.has(chunk)) { await sleep(10); continue; }
        busy.add(chunk);
        try {
          const owners = await chunkOwners();
          const from = owners[chunk]!;
          const others = ['shard0', 'shard1', 'shard2'].filter((s) => s !== from);
          const to = others[rand(2)]!;
          await routers[m % 2]!.db('admin').command({ moveChunk: NS, find: { k: chunk * 1000 + rand(1000) }, to, _waitForDelete: false });
          moveStats.done++;
        } catch (err) {
          const e = err as { codeName?: string; code?: number };
          const key = String(e.codeName ?? e.code ?? 'unknown');
          moveStats.errors.set(key, (moveStats.errors.get(key) ?? 0) + 1);
          if (key !== 'ConflictingOperationInProgress') failures.push(`mover ${m}: ${errText(err)}`);
          await sleep(20);
        } finally {
          busy.delete(chunk);
        }
      }
    };

    const quietChecks: string[] = [];
    const quietPoint = async (label: string): Promise<void> => {
      pause = true;
      while (parked < WRITERS) await sleep(5);
      try {
        const expected = modelSize();
        for (const [r] of routers.entries()) {
          const count = await coll(r).countDocuments({});
          assert.equal(count, expected, `${label}: countDocuments through router ${r}`);
          const n = (await routers[r]!.db('soak').command({ count: 'c' })).n;
          assert.equal(n, expected, `${label}: count command through router ${r}`);
        }
        const got = sortDocs(await coll(0).find({}).toArray());
        assert.deepEqual(got, sortDocs(modelDocs().map((d) => ({ ...d }))), `${label}: contents equal the model`);
        quietChecks.push(`${label}: ${expected} docs`);
      } finally {
        pause = false;
      }
    };

    const started = Date.now();
    const workers = [
      ...Array.from({ length: WRITERS }, (_, w) => writer(w)),
      reader(0), reader(1),
      mover(0), mover(1),
    ];
    let quietError: unknown;
    const ends = (): number => started + (moveStats.done >= MIN_MOVES ? DURATION_MS : MAX_DURATION_MS);
    try {
      let q = 0;
      while (Date.now() < ends() && failures.length === 0) {
        const next = started + (q + 1) * QUIET_EVERY_MS;
        await sleep(Math.max(0, Math.min(next, ends()) - Date.now()));
        if (Date.now() >= ends()) break;
        q++;
        await quietPoint(`quiet point ${q} at ${Math.round((Date.now() - started) / 1000)} s`);
      }
    } catch (err) {
      quietError = err;
    } finally {
      stop = true;
      pause = false;
      await Promise.all(workers);
    }
    const elapsed = Date.now() - started;
    const errs = Object.fromEntries(moveStats.errors);
    console.log(`soak: ${elapsed} ms, moves done ${moveStats.done}, move errors ${JSON.stringify(errs)}, ops per writer ${JSON.stringify(opsPerWriter)}, ` +
      `reader scans ${readerStats.scans} (${readerStats.docsSeen} docs), quiet checks [${quietChecks.join('; ')}], write errors ${writeErrors.length}`);
    if (writeErrors.length > 0) console.log(`write errors:\n${writeErrors.slice(0, 20).join('\n')}`);
    if (quietError !== undefined) throw quietError;
    assert.deepEqual(failures.slice(0, 20), [], 'no failure seen by writers, readers or movers');
    assert.deepEqual(writeErrors.slice(0, 20), [], 'every write was acknowledged');
    assert.ok(moveStats.done > 0, 'chunks moved');

    // Quiesce: every range deletion done on every shard.
    for (const d of direct) await d.db('admin').command({ cleanupOrphaned: NS });

    const expected = sortDocs(modelDocs().map((d) => ({ ...d })));
    for (const [r] of routers.entries()) {
      assert.deepEqual(sortDocs(await coll(r).find({}).toArray()), expected, `router ${r} contents equal the model`);
      assert.equal(await coll(r).countDocuments({}), expected.length);
    }
    const owners = await chunkOwners();
    const bounds = [-Infinity, ...SPLITS, Infinity];
    const onShards = await Promise.all(direct.map((d) => d.db('soak').collection<Doc>('c').find({}).toArray()));
    const ids: string[] = [];
    for (const [s, docs] of onShards.entries()) {
      for (const doc of docs) {
        ids.push(String(doc._id));
        const chunk = bounds.findIndex((b, i) => doc.k >= b && doc.k < bounds[i + 1]!);
        assert.equal(owners[chunk], `shard${s}`, `document ${String(doc._id)} (k ${doc.k}) on shard${s} but its chunk is on ${owners[chunk]}`);
      }
    }
    assert.equal(ids.length, expected.length, 'shards hold exactly the model, no orphans');
    assert.equal(new Set(ids).size, expected.length, 'no _id on two shards');
    for (const d of direct) assert.equal(await d.db('config').collection('rangeDeletions').countDocuments({}), 0, 'no range deletion task left');
  });
});
