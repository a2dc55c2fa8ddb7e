// npm run bench -- reshard-1m (issue 34's first acceptance, benchmark-sized): a collection of
// DOCSHARD_BENCH_RESHARD_DOCS documents (1,000,000 by default) sharded on a monotonic key {x: 1}
// over two shards (single-member replica sets, the config server one too) is resharded to
// {h: 'hashed'} while 8 clients write through two routers: retryable inserts and updates,
// transactions, retryable deletes. Afterwards it checks, and prints in its table, that every
// acknowledged write is there exactly once under the new key: the counts are exact (through a
// router, and summed over the shards' own copies), every acknowledged insert is present and every
// acknowledged delete absent, each document's counter equals its acknowledged increments, a sample
// of documents is found by the new key alone, `checkMetadataConsistency` is empty and the
// documents are spread evenly over the shards. A write whose outcome the client never learned
// (an error) is left out of the exact checks and counted.
import { BSON } from 'bson';
import { MongoClient, type Collection } from 'mongodb';
import { spawnRouter, type SpawnedRouter } from '../test/helpers/spawn_cluster.js';
import { removeDir, type AnyDoc } from '../test/helpers/spawn_node.js';
import { spawnReplicaSet, type SpawnedReplicaSet } from '../test/helpers/spawn_replset.js';
import { cpuSeconds } from './proc_cpu.js';
import { printTable } from './table.js';
import { wall } from './timed_load.js';

const MB = 1024 * 1024;
const DOCS = Number(process.env.DOCSHARD_BENCH_RESHARD_DOCS ?? 1_000_000);
const DOC_BYTES = 200;
const DB = 'bench';
const COLL = 'resh1m';
const NS = `${DB}.${COLL}`;
const WRITERS = 8;
const STEADY_MS = 5_000;
// Ids of the writers' own inserts: writer w's n-th is INSERTED + w·10⁷ + n, above every loaded id.
const INSERTED = 100_000_000;
const LOAD_BATCH = 1000;
const LOADERS = 4;
const SAMPLE = 2000;

const PAD = 'x'.repeat(DOC_BYTES - BSON.calculateObjectSize({ _id: 0, x: 0, h: 0, v: 0, pad: '' }));
const doc = (i: number): AnyDoc => ({ _id: i, x: i, h: i, v: 0, pad: PAD });
// Every filter names _id, x and h (never changed): it holds the shard key, old or new.
const byId = (i: number): AnyDoc => ({ _id: i, x: i, h: i });

const progress = (what: string): boolean => process.stderr.write(`${new Date().toISOString()} ${what}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

// What the writers were told: acknowledged inserts, deletes and increments, and the documents a
// failed operation may or may not have changed.
interface Ledger {
  inserted: Set<number>;
  deleted: Set<number>;
  incs: Map<number, number>;
  uncertain: Set<number>;
  ops: { end: number; ok: boolean }[];
}

// Writer w: 0–3 retryable insertOne alternating with a retryable updateOne $inc of one of its
// loaded documents; 4–5 a transaction inserting a document and incrementing a loaded one;
// 6–7 a retryable insertOne, findOneAndUpdate $inc, then deleteOne of its oldest live insert.
// Writers use the two routers in turn; each increments only loaded ids ≡ w (mod 8).
function startWriters(routers: readonly MongoClient[], ledger: Ledger): { stop(): Promise<void> } {
  let running = true;
  const workers = Array.from({ length: WRITERS }, async (_, w) => {
    const client = routers[w % routers.length]!;
    const coll: Collection<AnyDoc> = client.db(DB).collection(COLL);
    const live: number[] = [];
    let nextInsert = INSERTED + w * 10_000_000;
    for (let i = 0; running; i++) {
      const target = ((i * 7919) % Math.floor(DOCS / WRITERS)) * WRITERS + w;
      const touched: number[] = [];
      let ok = true;
      try {
        if (w < 4) {
          if (i % 2 === 0) {
            const id = nextInsert++;
            touched.push(id);
            await coll.insertOne(doc(id));
            ledger.inserted.add(id);
          } else {
            touched.push(target);
            await coll.updateOne(byId(target), { $inc: { v: 1 } });
            ledger.incs.set(target, (ledger.incs.get(target) ?? 0) + 1);
          }
        } else if (w < 6) {
          const id = nextInsert++;
          touched.push(id, target);
          const session = client.startSession();
          try {
            await session.withTransaction(async () => {
              await coll.insertOne(doc(id), { session });
              await coll.updateOne(byId(target), { $inc: { v: 1 } }, { session });
            });
          } finally {
            await session.endSession();
          }
          ledger.inserted.add(id);
          ledger.incs.set(target, (ledger.incs.get(target) ?? 0) + 1);
        } else if (i % 3 === 0) {
          const id = nextInsert++;
          touched.push(id);
          await coll.insertOne(doc(id));
          ledger.inserted.add(id);
          live.push(id);
        } else if (i % 3 === 1) {
          touched.push(target);
          await coll.findOneAndUpdate(byId(target), { $inc: { v: 1 } });
          ledger.incs.set(target, (ledger.incs.get(target) ?? 0) + 1);
        } else if (live.length > 0) {
          const id = live.shift()!;
          touched.push(id);
          await coll.deleteOne(byId(id));
          ledger.deleted.add(id);
        }
      } catch (err) {
        ok = false;
        for (const id of touched) ledger.uncertain.add(id);
        progress(`writer ${w}: ${String(err)}`);
      }
      ledger.ops.push({ end: wall(), ok });
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

export async function runReshard1mBench(): Promise<void> {
  const began = wall();
  const sets: SpawnedReplicaSet[] = [];
  const routers: SpawnedRouter[] = [];
  const clients: MongoClient[] = [];
  try {
    sets.push(await spawnReplicaSet({ name: 'cfg', members: 1, node: () => ({ role: 'config' }) }));
    for (const name of ['rs0', 'rs1']) sets.push(await spawnReplicaSet({ name, members: 1 }));
    const configdb = `cfg/${sets[0]!.hosts.join(',')}`;
    for (let r = 0; r < 2; r++) routers.push(await spawnRouter(configdb));
    for (const r of routers) clients.push(new MongoClient(r.uri, { maxPoolSize: WRITERS + LOADERS + 4 }));
    const shards = sets.slice(1).map((s) => new MongoClient(`mongodb://${s.hosts[0]}/?directConnection=true`));
    clients.push(...shards);
    const [router0, router1] = clients as [MongoClient, MongoClient];
    const admin = router0.db('admin');
    for (const s of sets.slice(1)) await admin.command({ addShard: `${s.name}/${s.hosts.join(',')}` });
    await admin.command({ balancerStop: 1 });
    await router0.db('config').collection<AnyDoc>('settings').updateOne({ _id: 'autosplit' }, { $set: { enabled: false } }, { upsert: true });
    await admin.command({ enableSharding: DB, primaryShard: 'rs0' });
    await admin.command({ shardCollection: NS, key: { x: 1 } });
    // The monotonic key's data over both shards: the upper half, and every new insert, on rs1.
    await admin.command({ split: NS, middle: { x: Math.floor(DOCS / 2) } });
    await admin.command({ moveChunk: NS, find: { x: DOCS }, to: 'rs1', _waitForDelete: true });
    const t0 = wall();
    let next = 0;
    await Promise.all(Array.from({ length: LOADERS }, async (_, l) => {
      const coll = clients[l % 2]!.db(DB).collection<AnyDoc>(COLL);
      for (;;) {
        const from = next;
        next += LOAD_BATCH;
        if (from >= DOCS) return;
        await coll.insertMany(Array.from({ length: Math.min(LOAD_BATCH, DOCS - from) }, (_, j) => doc(from + j)), { ordered: false });
        if (from % 100_000 === 0) progress(`loaded ${from}`);
      }
    }));
    const loadMs = wall() - t0;
    progress(`loaded ${DOCS} × ${DOC_BYTES} B in ${secs(loadMs)}`);

    const ledger: Ledger = { inserted: new Set(), deleted: new Set(), incs: new Map(), uncertain: new Set(), ops: [] };
    const writers = startWriters([router0, router1], ledger);
    await sleep(1000);
    const steadyFrom = wall();
    await sleep(STEADY_MS);
    const r0 = wall();
    const cpu = (): number => sets.reduce((sum, s) => sum + s.nodes.reduce((n, node) => n + cpuSeconds(node.child.pid), 0), 0);
    const cpu0 = cpu();
    let reshardError: string | undefined;
    await admin.command({ reshardCollection: NS, key: { h: 'hashed' } }).catch((err: unknown) => {
      reshardError = String(err);
    });
    const r1 = wall();
    const reshardCpu = cpu() - cpu0;
    await sleep(1000);
    await writers.stop();
    progress(`resharding: ${secs(r1 - r0)}${reshardError === undefined ? '' : `, failed: ${reshardError}`}`);

    // The checks.
    const coll = router1.db(DB).collection<AnyDoc>(COLL);
    const entry = await router0.db('config').collection<AnyDoc>('collections').findOne({ _id: NS } as AnyDoc);
    const keyNow = JSON.stringify(entry?.key);
    const live = [...ledger.inserted].filter((id) => !ledger.deleted.has(id));
    const expected = DOCS + live.length;
    const routerCount = await coll.countDocuments({});
    const shardCounts = await Promise.all(shards.map((s) => s.db(DB).collection(COLL).countDocuments({})));
    const shardSum = shardCounts.reduce((a, b) => a + b, 0);
    const insertedNow = new Map<number, number>();
    for await (const d of coll.find({ _id: { $gte: INSERTED } }, { projection: { _id: 1 } })) insertedNow.set(d._id as number, (insertedNow.get(d._id as number) ?? 0) + 1);
    const missing = live.filter((id) => insertedNow.get(id) !== 1 && !ledger.uncertain.has(id));
    const resurrected = [...ledger.deleted].filter((id) => insertedNow.has(id) && !ledger.uncertain.has(id));
    const unexpected = [...insertedNow.keys()].filter((id) => !ledger.inserted.has(id) && !ledger.uncertain.has(id));
    const counters = new Map<number, number>();
    for await (const d of coll.find({ v: { $gt: 0 } }, { projection: { _id: 1, v: 1 } })) counters.set(d._id as number, d.v as number);
    const wrongCounters = [...new Set([...counters.keys(), ...ledger.incs.keys()])].filter((id) => !ledger.uncertain.has(id) && (counters.get(id) ?? 0) !== (ledger.incs.get(id) ?? 0));
    // Found through the new key alone (a targeted find: the document lies on the shard its new key names).
    const sample = [...live.slice(0, SAMPLE / 2), ...Array.from({ length: SAMPLE / 2 }, (_, i) => Math.floor((i * DOCS) / (SAMPLE / 2)))];
    let notFoundByNewKey = 0;
    for (const id of sample) if ((await coll.countDocuments({ h: id })) !== 1) notFoundByNewKey++;
    const inconsistencies = (await router0.db(DB).command({ checkMetadataConsistency: 1 })).cursor.firstBatch as AnyDoc[];
    const shares = shardCounts.map((c) => c / Math.max(1, shardSum));
    const exactCount = ledger.uncertain.size === 0 ? routerCount === expected : Math.abs(routerCount - expected) <= ledger.uncertain.size;

    const okOps = (from: number, to: number): number => ledger.ops.filter((o) => o.ok && o.end >= from && o.end < to).length;
    const steadyRate = (okOps(steadyFrom, r0) / (r0 - steadyFrom)) * 1000;
    const duringRate = (okOps(r0, r1) / (r1 - r0)) * 1000;
    const yes = (b: boolean): string => (b ? 'yes' : '**no**');
    const bytes = DOCS * DOC_BYTES;

    process.stdout.write(`\nResharding ${DOCS} docs of ${DOC_BYTES} B (${(bytes / MB).toFixed(0)} MB) {x: 1} → {h: hashed}, 2 single-member shards, 2 routers, ${WRITERS} writers\n\n`);
    printTable(['measure', 'result', 'aim', 'met'], [
      [`load (${LOADERS} loaders, insertMany of ${LOAD_BATCH})`, secs(loadMs), '', ''],
      ['reshardCollection under the writers', `${secs(r1 - r0)}: **${(bytes / MB / ((r1 - r0) / 1000)).toFixed(2)} MB/s**${reshardError === undefined ? '' : `, **failed: ${reshardError}**`}`, 'ok', yes(reshardError === undefined)],
      ['CPU seconds of the config server and shards during it', reshardCpu.toFixed(0), '', ''],
      ['write ops/s before ÷ during', `${steadyRate.toFixed(0)} ÷ ${duringRate.toFixed(0)} = ${(duringRate / steadyRate).toFixed(2)}`, '', ''],
      ['acknowledged: inserts, deletes, increments; failed operations', `${ledger.inserted.size}, ${ledger.deleted.size}, ${[...ledger.incs.values()].reduce((a, b) => a + b, 0)}; ${ledger.ops.filter((o) => !o.ok).length}`, '0 failed', yes(ledger.uncertain.size === 0)],
      ['shard key in config.collections', keyNow, '{"h":"hashed"}', yes(keyNow === '{"h":"hashed"}')],
      ['count through a router = loaded + live acknowledged inserts', `${routerCount} (expected ${expected})`, 'equal', yes(exactCount)],
      ['sum of the shards\' own counts (no copy twice, no orphan)', `${shardSum} (${shardCounts.join(' + ')})`, 'equal', yes(shardSum === routerCount)],
      ['acknowledged inserts missing or twice; deleted ones present; unknown ones', `${missing.length}; ${resurrected.length}; ${unexpected.length}`, '0; 0; 0', yes(missing.length + resurrected.length + unexpected.length === 0)],
      ['documents whose counter differs from its acknowledged $inc', `${wrongCounters.length} of ${ledger.incs.size}`, '0', yes(wrongCounters.length === 0)],
      [`sample (${sample.length}) not found exactly once by the new key alone`, String(notFoundByNewKey), '0', yes(notFoundByNewKey === 0)],
      ['checkMetadataConsistency', `${inconsistencies.length} inconsistencies${inconsistencies.length > 0 ? `: ${JSON.stringify(inconsistencies.slice(0, 3))}` : ''}`, 'none', yes(inconsistencies.length === 0)],
      ['share of documents per shard', shares.map((s) => s.toFixed(3)).join(' / '), '0.45–0.55 each', yes(shares.every((s) => s >= 0.45 && s <= 0.55))],
    ]);
    process.stdout.write(`\nwhole run ${secs(wall() - began)}\n`);
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.allSettled(routers.map((r) => r.stop()));
    await Promise.allSettled(sets.map((s) => s.stop()));
    for (const n of sets.flatMap((s) => s.nodes)) removeDir(n.dbpath);
  }
}
