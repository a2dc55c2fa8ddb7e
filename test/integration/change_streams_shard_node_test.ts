import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp as OwnTimestamp } from 'bson';
import { Timestamp, type ChangeStreamDocument, type Document, type MongoClient } from 'mongodb';
import { highWaterMarkToken } from '../../src/change_streams/resume_token.js';
import { withProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import type { SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// A change stream opened on a shard's primary (the node side a router will merge): a chunk
// migration's clone into it and the donor's range deletion are no events (fromMigrate), and an
// event of a sharded collection names its shard key fields and _id in documentKey.
describe('change streams on the members of replica-set shards', () => {
  const sets: SpawnedReplicaSet[] = [];
  let router: MongoClient;
  const primaryOf = new Map<string, MongoClient>();

  withProcesses(async (p) => {
    const config = await p.node({ role: 'config' });
    for (const name of ['rs0', 'rs1']) sets.push(await p.replicaSet({ name, members: 1, node: () => ({ extraArgs: ['--setParameter', 'orphanCleanupDelaySecs=0'] }) }));
    router = p.connect((await p.router(config.port)).uri);
    for (const set of sets) {
      await router.db('admin').command({ addShard: `${set.name}/${set.hosts.join(',')}` });
      primaryOf.set(set.name, p.connect(set.uri));
    }
    await router.db('admin').command({ enableSharding: 'app', primaryShard: 'rs0' });
    await router.db('admin').command({ shardCollection: 'app.items', key: { region: 1 } });
    await router.db('app').collection<AnyDoc>('items').insertMany([{ _id: 1, region: 'a' }, { _id: 2, region: 'z' }]);
  });

  it('shows no event for a migration, and the shard key in documentKey', { timeout: 180_000 }, async () => {
    const donor = primaryOf.get('rs0')!.db('app').collection<AnyDoc>('items').watch();
    const recipient = primaryOf.get('rs1')!.db('app').collection<AnyDoc>('items').watch();
    await donor.tryNext();
    await recipient.tryNext();
    await router.db('admin').command({ split: 'app.items', middle: { region: 'm' } });
    await router.db('admin').command({ moveChunk: 'app.items', find: { region: 'z' }, to: 'rs1', _waitForDelete: true });
    const items = router.db('app').collection<AnyDoc>('items');
    await items.insertOne({ _id: 3, region: 'y' }, { writeConcern: { w: 'majority' } });
    await items.updateOne({ region: 'y', _id: 3 }, { $set: { v: 1 } }, { writeConcern: { w: 'majority' } });
    await items.deleteOne({ region: 'y', _id: 3 }, { writeConcern: { w: 'majority' } });
    await items.insertOne({ _id: 4, region: 'b' }, { writeConcern: { w: 'majority' } });
    const onRecipient = [await recipient.next(), await recipient.next(), await recipient.next()] as (ChangeStreamDocument & Document)[];
    assert.deepEqual(onRecipient.map((e) => [e.operationType, e.documentKey]), [
      ['insert', { region: 'y', _id: 3 }],
      ['update', { region: 'y', _id: 3 }],
      ['delete', { region: 'y', _id: 3 }],
    ], 'the migrated document _id 2 arrived with no event');
    const onDonor = (await donor.next()) as ChangeStreamDocument & Document;
    assert.deepEqual([onDonor.operationType, onDonor.documentKey], ['insert', { region: 'b', _id: 4 }], 'the range deletion of _id 2 is no event');
    await donor.close();
    await recipient.close();
  });

  // A shard's promise follows its clock with no write, but not past a transaction prepared there
  // and not decided: its commitTimestamp, chosen by its coordinator at or after its prepare, may
  // fall before the clock. Committed at the tick after its prepare, once the clock is well past,
  // its event still comes after every postBatchResumeToken the stream reported.
  it('promises nothing past a prepared transaction in doubt, whose event comes after every token reported', { timeout: 120_000 }, async () => {
    const shard = primaryOf.get('rs1')!;
    const coll = shard.db('prep').collection<AnyDoc>('c');
    await coll.insertOne({ _id: 'first' });
    const stream = coll.watch([], { maxAwaitTimeMS: 200 });
    await stream.tryNext();
    const session = shard.startSession();
    try {
      session.startTransaction();
      await coll.insertOne({ _id: 'prepared' }, { session });
      const { prepareTimestamp } = await shard.db('admin').command({ prepareTransaction: 1 }, { session }) as { prepareTimestamp: Timestamp };
      // The driver's bson is not the one docshard's sources use.
      const mark = highWaterMarkToken(new OwnTimestamp({ t: prepareTimestamp.t, i: prepareTimestamp.i }))._data;
      const reported: string[] = [];
      for (const until = Date.now() + 2500; Date.now() < until;) {
        assert.equal(await stream.tryNext(), null);
        reported.push((stream.resumeToken as { _data: string })._data);
      }
      assert.ok(reported.every((t) => t <= mark), `no promise past the prepare time: ${reported.at(-1)} > ${mark}`);
      const commitTimestamp = new Timestamp({ t: prepareTimestamp.t, i: prepareTimestamp.i + 1 });
      await shard.db('admin').command({ commitTransaction: 1, commitTimestamp }, { session });
      const event = await stream.next() as ChangeStreamDocument & Document;
      assert.equal(event.documentKey?._id, 'prepared');
      const token = (event._id as { _data: string })._data;
      assert.ok(reported.every((t) => t < token), 'the event comes after every token reported');
    } finally {
      await session.endSession().catch(() => undefined);
      await stream.close();
    }
  });
});
