import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MaxKey, MinKey, MongoClient, MongoServerError } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { spawnSetCluster, type SetCluster } from '../helpers/spawn_set_cluster.js';

// Issue 34's reshardCollection through a router over two shards that are (one-member) sets, the
// donors' oplog and snapshot reads being what resharding copies from. DOCSHARD_RESHARD_DOCS sets the
// collection's size (the 1 million by hand).
const DOCS = Number(process.env.DOCSHARD_RESHARD_DOCS ?? 2000);
const WRITERS = 3;

describe('reshardCollection', () => {
  let cluster: SetCluster;
  let client: MongoClient;
  withProcesses(async (p) => {
    cluster = await spawnSetCluster(p, { shards: 2, members: 1, configMembers: 1, routers: 1, args: ['--enableTestCommands'] });
    client = p.connect(cluster.routers[0]!.uri);
  });

  const admin = () => client.db('admin');
  const shardClient = (i: number): MongoClient => new MongoClient(`mongodb://${cluster.shards[i]!.hosts[0]}/?directConnection=true`);

  // A collection sharded on the monotonic {x: 1}, its upper half moved to the second shard.
  async function shardedOnX(ns: string, n: number): Promise<void> {
    const [db, coll] = ns.split('.') as [string, string];
    await admin().command({ shardCollection: ns, key: { x: 1 } });
    const docs = client.db(db).collection<AnyDoc>(coll);
    for (let i = 0; i < n; i += 1000) {
      await docs.insertMany(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ _id: i + j, x: i + j, k: i + j, v: 0 })));
    }
    const shards = (await admin().command({ listShards: 1 })).shards as AnyDoc[];
    await admin().command({ split: ns, middle: { x: Math.floor(n / 2) } });
    await admin().command({ moveChunk: ns, find: { x: n }, to: shards[1]!._id });
  }

  async function temporaryCollections(): Promise<string[]> {
    const names: string[] = [];
    for (let i = 0; i < cluster.shards.length; i++) {
      const c = shardClient(i);
      try {
        for (const name of await c.db('reshard').listCollections({}, { nameOnly: true }).toArray()) if (name.name.startsWith('system.resharding.')) names.push(name.name);
      } finally {
        await c.close();
      }
    }
    return names;
  }

  it('reshards a collection from a monotonic key to a hashed one while clients write through the router', { timeout: 120_000 }, async (t) => {
    const ns = 'reshard.docs';
    await shardedOnX(ns, DOCS);
    const docs = client.db('reshard').collection<AnyDoc>('docs');
    await docs.createIndex({ v: 1 });
    // What each writer had acknowledged: inserts, increments of v, and the last k it set.
    const expected = new Map<number, { v: number; k: number }>(Array.from({ length: DOCS }, (_, i) => [i, { v: 0, k: i }]));
    let stop = false;
    let acknowledged = 0;
    const writer = async (w: number): Promise<void> => {
      let next = DOCS + w;
      for (let n = 0; !stop; n++) {
        if (n % 3 === 0) {
          // Inserts past the end of the monotonic key: all on one donor before the resharding.
          await docs.insertOne({ _id: next, x: next, k: next, v: 0 });
          expected.set(next, { v: 0, k: next });
          next += WRITERS;
        } else {
          const id = (n * 7919 + w) % DOCS;
          const mine = id % WRITERS === w;
          const target = mine ? id : id - (id % WRITERS) + w;
          if (target >= DOCS) continue;
          const e = expected.get(target)!;
          if (n % 3 === 1) {
            await docs.updateOne({ _id: target, x: target }, { $inc: { v: 1 } });
            e.v += 1;
          } else {
            // Changes the new key: the document moves between recipients.
            const k = e.k + DOCS * 10;
            await docs.updateOne({ _id: target, x: target }, { $set: { k } });
            e.k = k;
          }
        }
        acknowledged++;
      }
    };
    // Retryable writes acknowledged before the resharding, sent again after it: answered from the
    // history the recipients copied, never run twice. The txnNumber is past any the driver's
    // pooled sessions used; its own client, whose sessions go back to no pool that others use.
    const retrying = new MongoClient(cluster.routers[0]!.uri);
    const retried = [
      { update: 'docs', updates: [{ q: { _id: 5, x: 5 }, u: { $inc: { v: 100 } } }], txnNumber: Long.fromNumber(1000) },
      { insert: 'docs', documents: [{ _id: -1, x: -1, k: -1, v: 0 }], txnNumber: Long.fromNumber(1000) },
    ];
    const sessions = retried.map(() => retrying.startSession());
    const firstReplies = [];
    for (const [i, cmd] of retried.entries()) firstReplies.push(await retrying.db('reshard').command(cmd, { session: sessions[i] }));
    assert.deepEqual(firstReplies.map((r) => [r.n, r.writeErrors]), [[1, undefined], [1, undefined]]);
    expected.get(5)!.v += 100;
    expected.set(-1, { v: 0, k: -1 });
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const beforeResharding = acknowledged;
    const started = performance.now();
    await admin().command({ reshardCollection: ns, key: { k: 'hashed' } });
    const tookMs = performance.now() - started;
    const atCommit = acknowledged - beforeResharding;
    // Writes go on under the new key for a moment.
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop = true;
    await Promise.all(writers);
    t.diagnostic(`${DOCS} documents resharded in ${Math.round(tookMs)} ms; writes acknowledged: ${beforeResharding} in the second before, ${atCommit} during it, ${acknowledged} in all`);
    assert.ok(atCommit > 0, 'clients wrote during the resharding');

    for (const [i, cmd] of retried.entries()) {
      const again = await retrying.db('reshard').command(cmd, { session: sessions[i] });
      assert.deepEqual([again.n, again.nModified, again.writeErrors], [firstReplies[i]!.n, firstReplies[i]!.nModified, undefined], `${Object.keys(cmd)[0]} retried after the commit: ${JSON.stringify(again)}`);
    }
    for (const session of sessions) await session.endSession();
    await retrying.close();

    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    assert.deepEqual(entry?.key, { k: 'hashed' });
    const chunks = await client.db('config').collection<AnyDoc>('chunks').find({ uuid: entry!.uuid }).toArray();
    assert.deepEqual([...new Set(chunks.map((c) => c.shard))].sort(), cluster.shards.map((s) => s.name).sort(), 'the new chunks are spread over both shards');

    assert.equal(await docs.countDocuments(), expected.size, 'counts are exact');
    const found = await docs.find({}).toArray();
    assert.equal(found.length, expected.size);
    const seen = new Set<number>();
    for (const d of found) {
      assert.ok(!seen.has(d._id as number), `_id ${String(d._id)} is present once`);
      seen.add(d._id as number);
      assert.deepEqual({ v: d.v, k: d.k }, expected.get(d._id as number), `_id ${String(d._id)}`);
    }
    // Each shard holds its share, and only under the new key.
    let held = 0;
    for (let i = 0; i < cluster.shards.length; i++) {
      const c = shardClient(i);
      try {
        const indexes = (await c.db('reshard').collection('docs').listIndexes().toArray()).map((i) => i.name).sort();
        assert.deepEqual(indexes, ['_id_', 'k_hashed', 'v_1', 'x_1'], `shard ${i} has the source's indexes and the new key's`);
        const n = await c.db('reshard').collection('docs').countDocuments();
        assert.ok(n > expected.size / 4, `shard ${i} holds ${n} of ${expected.size}`);
        held += n;
      } finally {
        await c.close();
      }
    }
    assert.equal(held, expected.size, 'no copy left behind on a donor');
    const consistency = await admin().command({ checkMetadataConsistency: 1, checkIndexes: true });
    assert.deepEqual((consistency.cursor as AnyDoc).firstBatch, []);
    assert.deepEqual(await temporaryCollections(), []);
    assert.equal(await client.db('config').collection('reshardingOperations').countDocuments(), 0);
  });

  it('aborts on abortReshardCollection before the commit: nothing changed, no temporary collection left', { timeout: 60_000 }, async () => {
    const ns = 'reshard.aborted';
    await shardedOnX(ns, 500);
    const before = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    await admin().command({ configureFailPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', mode: 'alwaysOn' });
    const config = new MongoClient(`mongodb://${cluster.config.hosts[0]}/?directConnection=true`);
    try {
      await config.db('admin').command({ configureFailPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', mode: 'alwaysOn' });
      const resharding = admin().command({ reshardCollection: ns, key: { k: 'hashed' } }).then(() => undefined, (err: unknown) => err);
      await config.db('admin').command({ waitForFailPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', timesEntered: 1, maxTimeMS: 30_000 });
      // $currentOp shows the coordinator on the config server and each recipient on its shard.
      const [coordinator] = (await config.db('admin').command({ currentOp: 1 })).inprog as AnyDoc[];
      assert.equal(coordinator?.coordinatorState, 'applying');
      // The donors' counts, the first donor's orphans of the chunk it gave away included.
      assert.ok((coordinator?.approxDocumentsToCopy as number) >= 500);
      assert.deepEqual(coordinator?.originatingCommand, { reshardCollection: ns, key: { k: 'hashed' }, unique: false });
      let copied = 0;
      let ddlCoordinators = 0;
      for (let i = 0; i < cluster.shards.length; i++) {
        const c = shardClient(i);
        try {
          const inprog = (await c.db('admin').command({ currentOp: 1 })).inprog as AnyDoc[];
          // The database's primary holds the collection's DDL lock meanwhile.
          ddlCoordinators += inprog.filter((op) => op.desc === 'ReshardCollectionCoordinator' && op.ns === ns).length;
          const ops = inprog.filter((op) => String(op.desc).startsWith('ReshardingRecipientService'));
          assert.deepEqual(ops.map((op) => [op.ns, op.recipientState]), [[ns, 'applying']]);
          copied += ops[0]!.documentsCopied as number;
        } finally {
          await c.close();
        }
      }
      assert.equal(copied, 500, 'the recipients copied every document once between them');
      assert.equal(ddlCoordinators, 1);
      await admin().command({ abortReshardCollection: ns });
      await config.db('admin').command({ configureFailPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', mode: 'off' });
      const err = await resharding;
      assert.ok(err instanceof MongoServerError && err.codeName === 'ReshardCollectionAborted', String(err));
    } finally {
      await config.close();
    }
    const after = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    assert.deepEqual(after?.key, { x: 1 });
    assert.deepEqual(after?.uuid, before?.uuid);
    assert.equal(after?.permitMigrations, undefined, 'migrations are allowed again');
    assert.equal(await client.db('reshard').collection('aborted').countDocuments(), 500);
    assert.deepEqual(await temporaryCollections(), []);
    assert.equal(await client.db('config').collection('reshardingOperations').countDocuments(), 0);
    await assert.rejects(admin().command({ abortReshardCollection: ns }), (err: unknown) => err instanceof MongoServerError && err.codeName === 'NoSuchReshardCollection');
  });

  it('aborts when the recipients do not finish within reshardingCriticalSectionTimeoutMillis: writes blocked meanwhile go on', { timeout: 60_000 }, async () => {
    const ns = 'reshard.timeout';
    await shardedOnX(ns, 200);
    const docs = client.db('reshard').collection<AnyDoc>('timeout');
    const shards = cluster.shards.map((_, i) => shardClient(i));
    try {
      for (const s of shards) await s.db('admin').command({ configureFailPoint: 'reshardingPauseRecipientDuringOplogApplication', mode: 'alwaysOn' });
      const started = performance.now();
      const resharding = admin().command({ reshardCollection: ns, key: { k: 'hashed' } }).then(() => undefined, (err: unknown) => err);
      // Until the abort releases the critical section, this write waits; then it goes to the
      // collection as it was.
      await shards[0]!.db('admin').command({ waitForFailPoint: 'reshardingPauseRecipientDuringOplogApplication', timesEntered: 1, maxTimeMS: 30_000 });
      await docs.insertOne({ _id: 'during', x: 7, k: 7 });
      const err = await resharding;
      assert.ok(err instanceof MongoServerError && err.codeName === 'ReshardingCriticalSectionTimeout', String(err));
      assert.ok(performance.now() - started >= 5000, 'the default timeout is 5 s');
    } finally {
      for (const s of shards) {
        await s.db('admin').command({ configureFailPoint: 'reshardingPauseRecipientDuringOplogApplication', mode: 'off' });
        await s.close();
      }
    }
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    assert.deepEqual(entry?.key, { x: 1 });
    await docs.insertOne({ _id: 'after', x: 8, k: 8 });
    assert.equal(await docs.countDocuments(), 202);
    assert.deepEqual(await temporaryCollections(), []);
    assert.equal(await client.db('config').collection('reshardingOperations').countDocuments(), 0);
  });

  it('refuses bad input with MongoDB\'s errors, and the same key without forceRedistribution does nothing', { timeout: 60_000 }, async () => {
    const ns = 'reshard.input';
    await shardedOnX(ns, 10);
    await client.db('reshard').createCollection('plain');
    const refusal = async (cmd: AnyDoc, codeName: string): Promise<void> => {
      await assert.rejects(admin().command(cmd), (err: unknown) => {
        assert.ok(err instanceof MongoServerError, String(err));
        assert.equal(err.codeName, codeName, `${JSON.stringify(cmd)}: ${err.message}`);
        return true;
      });
    };
    await refusal({ reshardCollection: 'reshard.plain', key: { k: 1 } }, 'NamespaceNotSharded');
    await refusal({ reshardCollection: 'reshard.missing', key: { k: 1 } }, 'NamespaceNotFound');
    await refusal({ reshardCollection: ns, key: { k: 1 }, bogus: 1 }, 'Location40415');
    await refusal({ reshardCollection: ns, key: 'k' }, 'TypeMismatch');
    await refusal({ reshardCollection: ns, key: { k: 'sideways' } }, 'BadValue');
    await refusal({ reshardCollection: ns, key: { k: 1 }, unique: true }, 'BadValue');
    await refusal({ reshardCollection: ns, key: { k: 1 }, collation: { locale: 'fr' } }, 'BadValue');
    await refusal({ commitReshardCollection: ns }, 'NoSuchReshardCollection');
    const before = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    await admin().command({ reshardCollection: ns, key: { x: 1 } });
    const after = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    assert.deepEqual(after?.lastmodEpoch, before?.lastmodEpoch, 'the same key changes nothing');

    const config = new MongoClient(`mongodb://${cluster.config.hosts[0]}/?directConnection=true`);
    try {
      await config.db('admin').command({ configureFailPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', mode: 'alwaysOn' });
      const first = admin().command({ reshardCollection: ns, key: { k: 'hashed' } }).then(() => undefined, (err: unknown) => err);
      await config.db('admin').command({ waitForFailPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', timesEntered: 2, maxTimeMS: 30_000 });
      // MongoDB 7.0's ReshardCollectionCoordinator refuses another key with ConflictingOperationInProgress
      // (its jstests accept that or ReshardCollectionInProgress).
      await refusal({ reshardCollection: ns, key: { v: 1 } }, 'ConflictingOperationInProgress');
      await config.db('admin').command({ configureFailPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', mode: 'off' });
      await admin().command({ commitReshardCollection: ns });
      assert.equal(await first, undefined, 'the resharding committed');
    } finally {
      await config.close();
    }
    const resharded = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    assert.deepEqual(resharded?.key, { k: 'hashed' });
    assert.equal(await client.db('reshard').collection('input').countDocuments(), 10);

    // The same key with forceRedistribution: a resharding all the same, a new UUID and layout.
    await admin().command({ reshardCollection: ns, key: { k: 'hashed' }, forceRedistribution: true, numInitialChunks: 6 });
    const redistributed = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    assert.notDeepEqual(redistributed?.uuid, resharded?.uuid);
    assert.equal(await client.db('config').collection('chunks').countDocuments({ uuid: redistributed!.uuid }), 6);
    assert.equal(await client.db('reshard').collection('input').countDocuments(), 10);
  });

  it('lays the new key\'s chunks along the zones it is given, which replace the collection\'s', { timeout: 60_000 }, async () => {
    const ns = 'reshard.zoned';
    await shardedOnX(ns, 100);
    const [rs0, rs1] = cluster.shards.map((s) => s.name) as [string, string];
    await admin().command({ addShardToZone: rs0, zone: 'low' });
    await admin().command({ addShardToZone: rs1, zone: 'high' });
    await admin().command({ updateZoneKeyRange: ns, min: { x: new MinKey() }, max: { x: 0 }, zone: 'low' });
    // The collection's zones are on {x}: not given, they must fit the new key, and do not.
    await assert.rejects(admin().command({ reshardCollection: ns, key: { k: 1 } }), (err: unknown) => err instanceof MongoServerError && err.codeName === 'InvalidOptions');
    await admin().command({
      reshardCollection: ns, key: { k: 1 },
      zones: [{ min: { k: new MinKey() }, max: { k: 50 }, zone: 'low' }, { min: { k: 50 }, max: { k: new MaxKey() }, zone: 'high' }],
    });
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    const chunks = await client.db('config').collection<AnyDoc>('chunks').find({ uuid: entry!.uuid }).sort({ min: 1 }).toArray();
    assert.deepEqual(chunks.map((c) => [c.min, c.max, c.shard]), [[{ k: new MinKey() }, { k: 50 }, rs0], [{ k: 50 }, { k: new MaxKey() }, rs1]]);
    const tags = await client.db('config').collection<AnyDoc>('tags').find({ ns }).sort({ min: 1 }).toArray();
    assert.deepEqual(tags.map((t) => [t.tag, t.min, t.max]), [['low', { k: new MinKey() }, { k: 50 }], ['high', { k: 50 }, { k: new MaxKey() }]]);
    const onShard = async (i: number): Promise<number> => {
      const c = shardClient(i);
      try {
        return await c.db('reshard').collection('zoned').countDocuments();
      } finally {
        await c.close();
      }
    };
    assert.deepEqual([await onShard(0), await onShard(1)], [50, 50]);
    const consistency = await admin().command({ checkMetadataConsistency: 1 });
    assert.deepEqual((consistency.cursor as AnyDoc).firstBatch, []);

    // Empty zones: none under the new key; a ranged key without zones is one chunk on the primary
    // shard, and the other shard keeps no copy.
    await admin().command({ reshardCollection: ns, key: { v: 1 }, zones: [] });
    assert.equal(await client.db('config').collection('tags').countDocuments({ ns }), 0);
    const primary = ((await client.db('config').collection<AnyDoc>('databases').findOne({ _id: 'reshard' as never }))!.primary) as string;
    const primaryIndex = cluster.shards.findIndex((s) => s.name === primary);
    assert.deepEqual([await onShard(primaryIndex), await onShard(1 - primaryIndex)], [100, 0]);
    const other = shardClient(1 - primaryIndex);
    try {
      assert.deepEqual(await other.db('reshard').listCollections({ name: 'zoned' }).toArray(), [], 'the old copy is dropped where no chunk is');
    } finally {
      await other.close();
    }
    const again = await admin().command({ checkMetadataConsistency: 1 });
    assert.deepEqual((again.cursor as AnyDoc).firstBatch, []);
  });
});
