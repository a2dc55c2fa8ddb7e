import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoServerError, type Timestamp } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';
import type { AnyDoc } from '../helpers/spawn_node.js';

// A read that waits on a primary for a prepared transaction's decision, when the primary steps down
// meanwhile: the step-down lets the prepared transaction go (its commit comes through replication,
// at a later time than its commit timestamp), so the read must not then run on what is now a
// secondary. It ends as MongoDB's operations interrupted by a step-down do
// (InterruptedDueToReplStateChange), which a router or driver retries on the new primary. Without
// that, a sharded cluster's snapshot read returned one shard's half of a cross-shard transfer
// without the other's.
describe('a read waiting for a prepared transaction on a primary that steps down', () => {
  let set: SpawnedReplicaSet;
  let p: SuiteProcesses;
  withProcesses(async (processes) => {
    p = processes;
    set = await p.replicaSet({ members: 3, electionTimeoutMillis: 2000 });
  });

  it('is interrupted rather than read on the former primary', { timeout: 120_000 }, async () => {
    const hello = await p.connect(set.uri).db('admin').command({ hello: 1 });
    const primary = p.connect(`mongodb://${String(hello.primary)}/?directConnection=true`);
    const c = primary.db('app').collection<AnyDoc>('c');
    await c.insertOne({ _id: 1, v: 0 }, { writeConcern: { w: 'majority' } });
    const session = primary.startSession();
    session.startTransaction();
    await c.updateOne({ _id: 1 }, { $set: { v: 1 } }, { session });
    const { prepareTimestamp } = await primary.db('admin').command({ prepareTransaction: 1 }, { session }) as { prepareTimestamp: Timestamp };
    const read = primary.db('app').command({ find: 'c', readConcern: { level: 'snapshot', atClusterTime: prepareTimestamp } }).then((r) => r as AnyDoc, (err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await primary.db('admin').command({ replSetStepDown: 30 });
    const outcome = await read;
    assert.ok(outcome instanceof MongoServerError && outcome.code === 11602, `interrupted, not answered: ${JSON.stringify(outcome)}`);
    await until('a new primary', async () => ((await p.connect(set.uri).db('admin').command({ hello: 1 })).isWritablePrimary === true ? true : undefined));
  });
});
