import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const N = 60;

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function collectionNames(client: MongoClient, db: string): Promise<string[]> {
  return (await client.db(db).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
}

// The balancer (when there is one) would move chunks on its own; these tests move them by hand.
async function stopBalancer(client: MongoClient): Promise<void> {
  await client.db('admin').command({ balancerStop: 1 }).catch(() => undefined);
}

describe('removeShard and movePrimary through the router', () => {
  let cluster: SpawnedCluster;
  let r0: MongoClient; // runs the admin commands
  let r1: MongoClient; // never told of any move
  const direct: MongoClient[] = [];

  withCluster({ shards: 2, routers: 2 }, async (f) => {
    ({ cluster, client: r0 } = f);
    r1 = f.connect(cluster.routers[1]!.uri);
    for (const s of cluster.shards) direct.push(f.connect(s.uri));
    await stopBalancer(r0);
    const admin = r0.db('admin');
    await admin.command({ enableSharding: 'rs', primaryShard: 'shard1' });
    await admin.command({ shardCollection: 'rs.sharded', key: { k: 1 } });
    await admin.command({ split: 'rs.sharded', middle: { k: 50 } });
    await admin.command({ moveChunk: 'rs.sharded', find: { k: 50 }, to: 'shard0', _waitForDelete: true });
    await r0.db('rs').collection<AnyDoc>('sharded').insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, k: i })));
    await r0.db('rs').createCollection('plain', { validator: { a: { $exists: true } } });
    await r0.db('rs').collection<AnyDoc>('plain').createIndex({ a: 1 }, { unique: true, name: 'a_unique' });
    await r0.db('rs').collection<AnyDoc>('plain').insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, a: i })));
    await r0.db('rs').collection<AnyDoc>('other').insertOne({ _id: 'x' });
    // The second router caches rs with shard1 as its primary.
    assert.equal(await r1.db('rs').collection('plain').countDocuments(), N);
  });

  it('refuses to remove an unknown shard (ShardNotFound)', async () => {
    const err = await r0.db('admin').command({ removeShard: 'nope' }).catch((e: unknown) => e) as { code?: number; message?: string };
    assert.equal(err.code, 70);
    assert.match(String(err.message), /Shard nope not found/);
  });

  it('starts draining on the first call and lists the databases to move', async () => {
    const reply = await r0.db('admin').command({ removeShard: 'shard1' });
    assert.deepEqual({ ...reply, $clusterTime: undefined, operationTime: undefined }, {
      msg: 'draining started successfully', state: 'started', shard: 'shard1',
      note: 'you need to drop or movePrimary these databases', dbsToMove: ['rs'], ok: 1,
      $clusterTime: undefined, operationTime: undefined,
    });
    const doc = await r0.db('config').collection<AnyDoc>('shards').findOne({ _id: 'shard1' });
    assert.equal(doc!.draining, true);
  });

  it('reports what remains while chunks and databases are left, with 64-bit counts', async () => {
    const reply = await r0.db('admin').command({ removeshard: 'shard1' }, { promoteLongs: false });
    assert.equal(reply.msg, 'draining ongoing');
    assert.equal(reply.state, 'ongoing');
    assert.ok(reply.remaining.chunks instanceof Long);
    assert.deepEqual(
      [reply.remaining.chunks.toNumber(), reply.remaining.dbs.toNumber(), reply.remaining.jumboChunks.toNumber()],
      [1, 1, 0],
    );
    assert.deepEqual(reply.dbsToMove, ['rs']);
    assert.equal(reply.note, 'you need to drop or movePrimary these databases');
  });

  it('does not make a draining shard primary of a new database, nor movePrimary to it', async () => {
    await r0.db('admin').command({ enableSharding: 'fresh' });
    const fresh = await r0.db('config').collection<AnyDoc>('databases').findOne({ _id: 'fresh' });
    assert.equal(fresh!.primary, 'shard0');
    const err = await r0.db('admin').command({ movePrimary: 'fresh', to: 'shard1' }).catch((e: unknown) => e) as { code?: number; message?: string };
    assert.equal(err.code, 70);
    assert.match(String(err.message), /Requested primary shard shard1 is draining/);
  });

  it('answers movePrimary errors as MongoDB does, and ok when the shard is already primary', async () => {
    const admin = r0.db('admin');
    const unknownDb = await admin.command({ movePrimary: 'nosuchdb', to: 'shard0' }).catch((e: unknown) => e) as { code?: number };
    assert.equal(unknownDb.code, 26);
    const unknownShard = await admin.command({ movePrimary: 'rs', to: 'nope' }).catch((e: unknown) => e) as { code?: number; message?: string };
    assert.equal(unknownShard.code, 70);
    assert.match(String(unknownShard.message), /Requested primary shard nope does not exist/);
    const internal = await admin.command({ movePrimary: 'config', to: 'shard0' }).catch((e: unknown) => e) as { code?: number };
    assert.equal(internal.code, 72);
    const reply = await admin.command({ movePrimary: 'rs', to: 'shard1' });
    assert.equal(reply.ok, 1);
    const rs = await r0.db('config').collection<AnyDoc>('databases').findOne({ _id: 'rs' });
    assert.deepEqual([rs!.primary, rs!.version.lastMod], ['shard1', 1]);
  });

  it('counts down as the chunks are moved off', async () => {
    await r0.db('admin').command({ moveChunk: 'rs.sharded', find: { k: 0 }, to: 'shard0', _waitForDelete: true });
    const reply = await r0.db('admin').command({ removeShard: 'shard1' });
    assert.equal(reply.state, 'ongoing');
    assert.deepEqual(reply.remaining, { chunks: 0, dbs: 1, jumboChunks: 0 });
  });

  it('movePrimary moves the unsharded collections with their indexes and options, under writes from a stale router', async () => {
    const plain = r1.db('rs').collection<AnyDoc>('plain');
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const _id = `w${i}`;
        await plain.insertOne({ _id, a: `w${i}` });
        acknowledged.push(_id);
      }
    })();
    await until('some writes before the move', async () => acknowledged.length >= 5);
    const reply = await r0.db('admin').command({ movePrimary: 'rs', to: 'shard0' });
    assert.deepEqual({ ...reply, $clusterTime: undefined, operationTime: undefined }, { ok: 1, $clusterTime: undefined, operationTime: undefined });
    const atMove = acknowledged.length;
    await until('writes after the move', async () => acknowledged.length >= atMove + 5);
    writing = false;
    await writer;

    const rs = await r0.db('config').collection<AnyDoc>('databases').findOne({ _id: 'rs' });
    assert.deepEqual([rs!.primary, rs!.version.lastMod], ['shard0', 2]);

    // The new primary holds everything, with the options and indexes; the old one nothing.
    const onNew = direct[0]!.db('rs');
    assert.equal(await onNew.collection('plain').countDocuments(), N + acknowledged.length);
    const ids = new Set((await onNew.collection<AnyDoc>('plain').find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)));
    for (const id of acknowledged) assert.ok(ids.has(id), `acknowledged write ${id} is on the new primary`);
    const indexes = await onNew.collection('plain').indexes();
    const unique = indexes.find((i) => i.name === 'a_unique');
    assert.deepEqual([unique?.key, unique?.unique], [{ a: 1 }, true]);
    const [info] = await onNew.listCollections({ name: 'plain' }).toArray();
    assert.deepEqual((info as AnyDoc).options.validator, { a: { $exists: true } });
    assert.equal(await onNew.collection('other').countDocuments(), 1);
    assert.deepEqual(await collectionNames(direct[1]!, 'rs'), ['sharded'], 'the old primary keeps only the sharded collection');

    // Both routers read and write; the stale one was told by the old primary.
    for (const r of [r0, r1]) {
      assert.equal(await r.db('rs').collection('plain').countDocuments(), N + acknowledged.length);
      assert.equal(await r.db('rs').collection('sharded').countDocuments(), 100);
    }
    await r1.db('rs').collection<AnyDoc>('plain').insertOne({ _id: 'after', a: 'after' });
    assert.equal(await onNew.collection<AnyDoc>('plain').countDocuments({ _id: 'after' }), 1);
    const dup = await r1.db('rs').collection<AnyDoc>('plain').insertOne({ _id: 'dup', a: 1 }).catch((e: unknown) => e) as { code?: number };
    assert.equal(dup.code, 11000, 'the unique index works on the new primary');

    const changes = await r0.db('config').collection<AnyDoc>('changelog').find({ ns: 'rs', what: /^movePrimary/ }).sort({ time: 1 }).toArray();
    assert.deepEqual(changes.map((c) => c.what), ['movePrimary.start', 'movePrimary.commit', 'movePrimary.end']);
    assert.deepEqual(changes.map((c) => [c.details.from, c.details.to]), [['shard1', 'shard0'], ['shard1', 'shard0'], ['shard1', 'shard0']]);
  });

  it('completes once nothing is left, and logs it', async () => {
    const reply = await r0.db('admin').command({ removeShard: 'shard1' });
    assert.deepEqual([reply.msg, reply.state, reply.shard], ['removeshard completed successfully', 'completed', 'shard1']);
    assert.equal(reply.remaining, undefined);
    const shards = (await r0.db('admin').command({ listShards: 1 })).shards as AnyDoc[];
    assert.deepEqual(shards.map((s) => s._id), ['shard0']);
    const log = await r0.db('config').collection<AnyDoc>('changelog').find({ what: /^removeShard/ }).sort({ time: 1 }).toArray();
    assert.deepEqual(log.map((c) => [c.what, c.details.shard]), [['removeShard.start', 'shard1'], ['removeShard', 'shard1']]);
    for (const r of [r0, r1]) {
      assert.equal(await r.db('rs').collection('sharded').countDocuments(), 100);
      assert.ok(await r.db('rs').collection('plain').countDocuments() > N);
    }
  });

  it('refuses to remove the last shard', async () => {
    const err = await r0.db('admin').command({ removeShard: 'shard0' }).catch((e: unknown) => e) as { code?: number; message?: string };
    assert.equal(err.code, 20);
    assert.match(String(err.message), /Operation not allowed because it would remove the last shard/);
  });

  it('adds the removed shard again under its old name, and can make it primary again', async () => {
    const added = await r0.db('admin').command({ addShard: `127.0.0.1:${cluster.shards[1]!.port}` });
    assert.equal(added.shardAdded, 'shard1');
    const shards = (await r0.db('admin').command({ listShards: 1 })).shards as AnyDoc[];
    assert.deepEqual(shards.map((s) => [s._id, s.draining]), [['shard0', undefined], ['shard1', undefined]]);
    await r0.db('admin').command({ movePrimary: 'rs', to: 'shard1' });
    const count = await r0.db('rs').collection('plain').countDocuments();
    assert.equal(await direct[1]!.db('rs').collection('plain').countDocuments(), count);
    assert.deepEqual(await collectionNames(direct[0]!, 'rs'), ['sharded']);
    assert.equal(await r1.db('rs').collection('plain').countDocuments(), count, 'the stale router follows the second move too');
    await r1.db('rs').collection<AnyDoc>('plain').insertOne({ _id: 'back', a: 'back' });
    assert.equal(await direct[1]!.db('rs').collection<AnyDoc>('plain').countDocuments({ _id: 'back' }), 1);
  });

  it('refuses to move onto a collection the recipient already holds, and aborts without touching it', async () => {
    await r0.db('fresh').collection<AnyDoc>('c').insertOne({ _id: 1 });
    await direct[1]!.db('fresh').collection<AnyDoc>('c').insertOne({ _id: 'orphan' });
    const err = await r0.db('admin').command({ movePrimary: 'fresh', to: 'shard1' }).catch((e: unknown) => e) as { code?: number; message?: string };
    assert.equal(err.code, 48);
    assert.match(String(err.message), /Found orphaned collection fresh.c on recipient shard1/);
    assert.equal(await direct[1]!.db('fresh').collection('c').countDocuments(), 1, 'the recipient keeps its own collection');
    const started = Date.now();
    await r1.db('fresh').collection<AnyDoc>('c').insertOne({ _id: 2 });
    // A donor still in its critical section would hold the write for 30 s (CRITICAL_SECTION_WAIT_MS)
    // before refusing it; anything well under that means it was released.
    assert.ok(Date.now() - started < 20_000, 'the donor was released');
    assert.equal(await direct[0]!.db('fresh').collection('c').countDocuments(), 2);
    const fresh = await r0.db('config').collection<AnyDoc>('databases').findOne({ _id: 'fresh' });
    assert.deepEqual([fresh!.primary, fresh!.version.lastMod], ['shard0', 1]);
    assert.deepEqual(await direct[0]!.db('config').collection('system.sharding_ddl_coordinators').find().toArray(), [], 'no coordinator is left on the donor');
    assert.deepEqual(await direct[0]!.db('config').collection('movePrimaryCriticalSections').find().toArray(), [], 'nor its critical section');
  });
});

// The MovePrimaryCoordinator runs on the donor (src/ddl/move_primary_coordinator.ts): killed at
// each of its phases, restarted, it finishes the move; so it does when the config server dies
// before the commit. Each case moves the database to the other shard.
const FAIL_POINT = 'hangBeforeDDLCoordinatorPhase';
const MOVE_PRIMARY_PHASES = ['kClone', 'kEnterCriticalSection', 'kCommit', 'kClean', 'kExitCriticalSection'];

describe('movePrimary survives kill -9 of the donor or the config server at each phase', () => {
  let cluster: SpawnedCluster;
  let router: MongoClient;
  const direct: MongoClient[] = [];
  const model = new Set<number | string>();
  let connect: (uri: string) => MongoClient;

  withCluster({ shards: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client: router } = f);
    // A client a test makes in place of one it closed is the suite's too, closed with it.
    connect = f.connect;
    for (const s of cluster.shards) direct.push(f.connect(s.uri));
    await stopBalancer(router);
    await router.db('admin').command({ enableSharding: 'cr', primaryShard: 'shard0' });
    await router.db('cr').collection<AnyDoc>('c').createIndex({ b: 1 });
    await router.db('cr').collection<AnyDoc>('c').insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, b: i })));
    for (let i = 0; i < 50; i++) model.add(i);
  });

  async function restart(index: number): Promise<void> {
    await direct[index]!.close();
    await cluster.shards[index]!.kill9();
    cluster.shards[index] = await restartNode(cluster.shards[index]!, { role: 'shard', extraArgs: ['--enableTestCommands'] });
    direct[index] = connect(cluster.shards[index]!.uri);
  }

  // The move from `from` to the other shard, paused at `phase` on the donor, the donor (or the
  // config server) killed there and restarted; a write sent meanwhile through the router.
  async function crashAt(phase: string, from: number, kill: 'donor' | 'config'): Promise<void> {
    const to = 1 - from;
    const donor = direct[from]!.db('admin');
    const { count } = await donor.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc: 'MovePrimaryCoordinator', phase } });
    const move = router.db('admin').command({ movePrimary: 'cr', to: `shard${to}` }).catch((e: unknown) => e);
    await donor.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
    const [doc] = await direct[from]!.db('config').collection<AnyDoc>('system.sharding_ddl_coordinators').find().toArray();
    assert.deepEqual([doc?._id, doc?.phase], [{ namespace: 'cr', operationType: 'movePrimary' }, phase], 'the phase is persisted on the donor');
    const id = `during-${phase}-${kill}`;
    const write = router.db('cr').collection<AnyDoc>('c').insertOne({ _id: id, b: -1 }).then(() => model.add(id), () => undefined);
    await new Promise((r) => setTimeout(r, 200));
    if (kill === 'donor') {
      await restart(from);
    } else {
      await cluster.config.kill9();
      const released = donor.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      await new Promise((r) => setTimeout(r, 300));
      cluster.config = await restartNode(cluster.config, { role: 'config', extraArgs: ['--enableTestCommands'] });
      await released;
    }
    await until('the coordinator finishes on the donor', async () => (await direct[from]!.db('config').collection('system.sharding_ddl_coordinators').countDocuments()) === 0, 60_000);
    await move;
    await write;

    const cr = await router.db('config').collection<AnyDoc>('databases').findOne({ _id: 'cr' });
    assert.equal(cr!.primary, `shard${to}`, 'the move completed');
    assert.deepEqual(await collectionNames(direct[from]!, 'cr'), [], 'the donor dropped its copy');
    const onNew = await direct[to]!.db('cr').collection<AnyDoc>('c').find({}, { projection: { _id: 1 } }).toArray();
    assert.deepEqual(onNew.map((d) => String(d._id)).sort(), [...model].map(String).sort(), 'the new primary holds every acknowledged write');
    assert.ok((await direct[to]!.db('cr').collection('c').indexes()).some((i) => i.name === 'b_1'));
    for (const d of direct) assert.deepEqual(await d.db('config').collection('movePrimaryCriticalSections').find().toArray(), [], 'no database critical section is left');
    const { cursor } = await router.db('cr').command({ checkMetadataConsistency: 1 });
    assert.deepEqual(cursor.firstBatch, []);
    // The database's DDL lock is free: another DDL of it runs at once.
    await router.db('cr').createCollection(`after_${phase}_${kill}`);
    await router.db('cr').collection(`after_${phase}_${kill}`).drop();
    const after = `after-${phase}-${kill}`;
    await router.db('cr').collection<AnyDoc>('c').insertOne({ _id: after, b: -2 });
    model.add(after);
    assert.equal(await direct[to]!.db('cr').collection<AnyDoc>('c').countDocuments({ _id: after }), 1, 'writes go to the new primary');
  }

  let primary = 0;
  for (const phase of MOVE_PRIMARY_PHASES) {
    it(`kill -9 of the donor before ${phase}, restart: the move completes`, async () => {
      await crashAt(phase, primary, 'donor');
      primary = 1 - primary;
    });
  }

  it('kill -9 of the config server before kCommit, restart: the move completes', async () => {
    await crashAt('kCommit', primary, 'config');
    primary = 1 - primary;
  });

  it('logs each move in config.changelog: start, commit, end', async () => {
    const log = await router.db('config').collection<AnyDoc>('changelog').find({ ns: 'cr', what: /^movePrimary/ }).sort({ time: 1 }).toArray();
    const whats = log.map((c) => c.what);
    assert.equal(whats.filter((w) => w === 'movePrimary.commit').length, MOVE_PRIMARY_PHASES.length + 1, 'one commit per move');
    assert.equal(whats.filter((w) => w === 'movePrimary.end').length, MOVE_PRIMARY_PHASES.length + 1, 'one end per move');
    assert.ok(!whats.includes('movePrimary.error'));
  });

  // After the commit the new primary is named, but the donor may still hold copies of the moved
  // collections: until it has dropped them, the recipient holds the database too, so a DDL sent
  // there (a shardCollection of a moved collection) waits for the move to end.
  it('the recipient holds the database from kEnterCriticalSection to the end: a shardCollection sent to it waits for the donor\'s clean-up', async () => {
    const from = primary;
    const to = 1 - from;
    const donor = direct[from]!.db('admin');
    const { count } = await donor.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc: 'MovePrimaryCoordinator', phase: 'kClean' } });
    const move = router.db('admin').command({ movePrimary: 'cr', to: `shard${to}` });
    try {
      await donor.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
      const held = await direct[to]!.db('config').collection<AnyDoc>('movePrimaryCriticalSections').find().toArray();
      assert.deepEqual(held, [{ _id: 'cr', reason: 'movePrimary', blockReads: true }], 'the recipient persisted its section');
      await router.db('admin').command({ flushRouterConfig: 1 });
      let answered = false;
      const shard = router.db('admin').command({ shardCollection: 'cr.c', key: { _id: 1 } }).finally(() => { answered = true; });
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal(answered, false, 'the new primary holds the shardCollection while the donor still has its copy');
      assert.deepEqual(await collectionNames(direct[from]!, 'cr'), ['c'], 'the donor has not cleaned up yet');
      await donor.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      await move;
      await shard;
    } finally {
      await donor.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
    }
    assert.deepEqual(await collectionNames(direct[from]!, 'cr'), [], 'the donor dropped its copy');
    for (const d of direct) assert.deepEqual(await d.db('config').collection('movePrimaryCriticalSections').find().toArray(), [], 'both sections were released');
    const entry = await router.db('config').collection<AnyDoc>('collections').findOne({ _id: 'cr.c' });
    assert.deepEqual(entry?.key, { _id: 1 });
    const ids = (await router.db('cr').collection<AnyDoc>('c').find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id));
    assert.deepEqual(ids.sort(), [...model].map(String).sort());
    const { cursor } = await router.db('cr').command({ checkMetadataConsistency: 1 });
    assert.deepEqual(cursor.firstBatch, []);
  });
});
