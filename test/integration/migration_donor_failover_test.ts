import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MongoClient } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// Issue 32's acceptance: a migration whose donor's primary fails over (a step-down, or `kill -9`)
// while the migration is held in a phase by a fail point ends committed or aborted, never both,
// and the new primary's recovery and range deleter finish the cleanup. One cluster serves every
// case: each moves its own chunk from rs0 to rs1, so rs0 is always the donor.
const DOCS_PER_CHUNK = 50;
const SHARD_ARGS = ['--enableTestCommands', '--setParameter', 'orphanCleanupDelaySecs=0'];

interface Phase {
  readonly name: string;
  readonly failPoint: string;
  // The shard whose primary pauses: the donor's own steps, or the recipient for the donor to wait in catch-up.
  readonly pausedOn: 'donor' | 'recipient';
  // Who owns the range afterwards: the config server committed it before the failover, or did not.
  readonly owner: 'rs0' | 'rs1';
}

const PHASES: readonly Phase[] = [
  // The recipient acknowledged _recvChunkStart and clones; the donor polls its status.
  { name: 'clone', failPoint: 'moveChunkHangAtStep2', pausedOn: 'donor', owner: 'rs0' },
  // The recipient cloned everything and applies _transferMods until it is steady.
  { name: 'catch-up', failPoint: 'migrateThreadHangAtStep4', pausedOn: 'recipient', owner: 'rs0' },
  // The recipient committed its side; the donor holds writes and reads, its commit not yet sent.
  { name: 'critical section', failPoint: 'moveChunkHangAtStep5', pausedOn: 'donor', owner: 'rs0' },
  // The config server committed the move; the donor has not yet persisted the decision.
  { name: 'commit', failPoint: 'moveChunkHangAtStep6', pausedOn: 'donor', owner: 'rs1' },
];
const FAILOVERS = ['stepDown', 'kill -9'] as const;
// One chunk per phase and failover, and one for the donor killed before its secondaries have its documents.
const CHUNKS = PHASES.length * FAILOVERS.length + 1;

describe('a migration whose donor primary fails over in each phase', () => {
  let p: SuiteProcesses;
  let router: MongoClient;
  const sets: Record<'rs0' | 'rs1', SpawnedReplicaSet> = {} as never;
  const direct = new Map<string, MongoClient>();
  const member = (host: string): MongoClient => {
    let c = direct.get(host);
    if (c === undefined) {
      c = p.connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`, { serverSelectionTimeoutMS: 5000 });
      direct.set(host, c);
    }
    return c;
  };

  const primaryOf = (set: SpawnedReplicaSet, notHost?: string): Promise<string> => until(`a primary of ${set.name}`, async () => {
    for (const host of set.hosts) {
      if (host === notHost) continue;
      const hello = await member(host).db('admin').command({ hello: 1 }).catch(() => undefined);
      if (hello?.isWritablePrimary === true && hello.me === host) return host;
    }
    return undefined;
  }, 60_000, 100);

  const everyMemberUp = (set: SpawnedReplicaSet): Promise<true> => until(`every member of ${set.name} PRIMARY or SECONDARY`, async () => {
    const status = await member(await primaryOf(set)).db('admin').command({ replSetGetStatus: 1 });
    const states = (status.members as AnyDoc[]).map((m) => m.stateStr as string);
    return states.every((s) => s === 'PRIMARY' || s === 'SECONDARY') ? true : undefined;
  }, 60_000);

  // The killed member started again on its dbpath and port (held a moment after the kill).
  async function restart(set: SpawnedReplicaSet, host: string): Promise<void> {
    const i = set.hosts.indexOf(host);
    const old = set.nodes[i]!;
    direct.delete(host);
    for (let attempt = 1; ; attempt++) {
      try {
        set.nodes[i] = await p.node({ dbpath: old.dbpath, port: old.port, extraArgs: ['--replSet', set.name, ...SHARD_ARGS] });
        return;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  // The end every case must reach: no coordinator document on the donor and no range deletion
  // task on either shard (the new primary's recovery and both range deleters done), the range owned
  // by `owner` alone in config.chunks and held by it alone, every document once through the router,
  // and checkMetadataConsistency empty.
  async function checkEnd(min: number, owner: 'rs0' | 'rs1'): Promise<void> {
    const max = min + DOCS_PER_CHUNK;
    // The new primary's recovery decides and cleans up; its range deleter and the recipient's empty the tasks.
    let left = '';
    await until('no coordinator document on the donor, no range deletion task on either shard', async () => {
      const donorNow = member(await primaryOf(sets.rs0));
      const recipientNow = member(await primaryOf(sets.rs1));
      const docs = {
        coordinators: await donorNow.db('config').collection('migrationCoordinators').find({}).toArray(),
        donorTasks: await donorNow.db('config').collection('rangeDeletions').find({}).toArray(),
        recipientTasks: await recipientNow.db('config').collection('rangeDeletions').find({}).toArray(),
      };
      left = JSON.stringify(docs);
      return Object.values(docs).every((d) => d.length === 0) ? true : undefined;
    }, 60_000, 250).catch((err: Error) => {
      throw new Error(`${err.message}: left ${left}`);
    });

    const owners = await router.db('config').collection<AnyDoc>('chunks').find({ 'min.k': { $lte: min }, 'max.k': { $gt: min } }).toArray();
    assert.deepEqual(owners.map((c) => c.shard), [owner], 'one chunk holds the range, on the shard the case decides');
    const items = router.db('app').collection<AnyDoc>('items');
    const ids = (await items.find({ k: { $gte: min, $lt: max } }).toArray()).map((d) => d._id as number).sort((a, b) => a - b);
    assert.deepEqual(ids, Array.from({ length: DOCS_PER_CHUNK }, (_, i) => min + i), 'every document of the range once through the router');
    assert.equal(await items.countDocuments({}), CHUNKS * DOCS_PER_CHUNK);
    for (const name of ['rs0', 'rs1'] as const) {
      const held = await member(await primaryOf(sets[name])).db('app').collection('items').countDocuments({ k: { $gte: min, $lt: max } });
      assert.equal(held, name === owner ? DOCS_PER_CHUNK : 0, `${name}'s primary holds the range only if it owns it`);
    }
    const { cursor } = await router.db('admin').command({ checkMetadataConsistency: 1 });
    assert.deepEqual(cursor.firstBatch, [], 'checkMetadataConsistency');
  }

  withProcesses(async (processes) => {
    p = processes;
    const config = await p.node({ role: 'config', extraArgs: ['--enableTestCommands'] });
    for (const name of ['rs0', 'rs1'] as const) {
      sets[name] = await p.replicaSet({ name, members: 3, electionTimeoutMillis: 5000, node: () => ({ extraArgs: SHARD_ARGS }) });
    }
    router = p.connect((await p.router(config.port)).uri);
    const admin = router.db('admin');
    for (const set of Object.values(sets)) await admin.command({ addShard: `${set.name}/${set.hosts.join(',')}` });
    await admin.command({ enableSharding: 'app', primaryShard: 'rs0' });
    await admin.command({ shardCollection: 'app.items', key: { k: 1 } });
    // Chunk c is [c * DOCS_PER_CHUNK, (c + 1) * DOCS_PER_CHUNK) for c from 1 to CHUNKS; the two
    // at MinKey and MaxKey stay empty.
    for (let c = 1; c <= CHUNKS + 1; c++) await admin.command({ split: 'app.items', middle: { k: c * DOCS_PER_CHUNK } });
    await router.db('app').collection<AnyDoc>('items').insertMany(
      Array.from({ length: CHUNKS * DOCS_PER_CHUNK }, (_, i) => ({ _id: DOCS_PER_CHUNK + i, k: DOCS_PER_CHUNK + i, pad: 'x'.repeat(100) })), { writeConcern: { w: 'majority' } },
    );
  });

  let chunk = 0;
  for (const phase of PHASES) {
    for (const failover of FAILOVERS) {
      const index = ++chunk;
      it(`${phase.name} (${phase.failPoint}), ${failover} of the donor's primary: ends ${phase.owner === 'rs0' ? 'aborted' : 'committed'}, cleaned up`, { timeout: 180_000 }, async (t) => {
        const min = index * DOCS_PER_CHUNK;
        const donor = sets.rs0;
        const donorPrimary = await primaryOf(donor);
        const pausedHost = phase.pausedOn === 'donor' ? donorPrimary : await primaryOf(sets.rs1);
        const paused = member(pausedHost).db('admin');
        const { count } = await paused.command({ configureFailPoint: phase.failPoint, mode: 'alwaysOn' });
        const move = router.db('admin').command({ moveChunk: 'app.items', find: { k: min }, to: 'rs1' }).then(() => 'ok', (err: Error) => err.message);
        await paused.command({ waitForFailPoint: phase.failPoint, timesEntered: count + 1, maxTimeMS: 60_000 });
        if (failover === 'stepDown') {
          await member(donorPrimary).db('admin').command({ replSetStepDown: 10, secondaryCatchUpPeriodSecs: 5 }).catch(() => undefined);
        } else {
          await donor.nodes[donor.hosts.indexOf(donorPrimary)]!.kill9();
        }
        t.diagnostic(`new donor primary ${await primaryOf(donor, donorPrimary)} (was ${donorPrimary})`);
        // Let go where it still runs: the deposed donor's driver ends where it is; a held recipient
        // hears from the new primary.
        if (pausedHost !== donorPrimary || failover === 'stepDown') await paused.command({ configureFailPoint: phase.failPoint, mode: 'off' });
        if (failover === 'kill -9') await restart(donor, donorPrimary);
        t.diagnostic(`moveChunk: ${await move}`);

        await checkEnd(min, phase.owner);
        await everyMemberUp(donor);
      });
    }
  }

  // The fix this test brought: the donor's coordinator document and range deletion task are
  // majority-committed before the recipient hears of the migration. Written w: 1, a kill -9 before
  // they replicate left the recipient with a pending task that no new primary knew to resolve.
  // With both secondaries stopped the donor's primary holds its documents alone: the recipient must
  // not have heard of the migration when it dies.
  it('kill -9 of the donor\'s primary before its secondaries have its coordinator document: the recipient never heard of it', { timeout: 180_000 }, async (t) => {
    const min = CHUNKS * DOCS_PER_CHUNK;
    const donor = sets.rs0;
    const donorPrimary = await primaryOf(donor);
    const secondaries = donor.nodes.filter((_, i) => donor.hosts[i] !== donorPrimary);
    const resume = (): void => { for (const n of secondaries) n.child.kill('SIGCONT'); };
    p.beforeStop(resume);
    for (const n of secondaries) n.child.kill('SIGSTOP');
    let move: Promise<string>;
    try {
      move = router.db('admin').command({ moveChunk: 'app.items', find: { k: min }, to: 'rs1' }).then(() => 'ok', (err: Error) => err.message);
      const coordinators = member(donorPrimary).db('config').collection('migrationCoordinators');
      await until('the coordinator document on the donor\'s primary', async () => ((await coordinators.countDocuments({})) > 0 ? true : undefined), 10_000, 50);
      // Time for _recvChunkStart to reach the recipient, were it sent.
      await new Promise((r) => setTimeout(r, 1000));
      await donor.nodes[donor.hosts.indexOf(donorPrimary)]!.kill9();
    } finally {
      resume();
    }
    t.diagnostic(`new donor primary ${await primaryOf(donor, donorPrimary)} (was ${donorPrimary})`);
    await restart(donor, donorPrimary);
    t.diagnostic(`moveChunk: ${await move}`);
    await checkEnd(min, 'rs0');
    await everyMemberUp(donor);
  });

  // The recipient answers the commit only once what it received is majority-committed there: with
  // its secondaries stopped, the range stays the donor's; once they run again, the move commits.
  it("a recipient whose secondaries cannot replicate what it received does not let the move commit", { timeout: 180_000 }, async () => {
    const admin = router.db('admin');
    await admin.command({ shardCollection: 'app.held', key: { _id: 1 } });
    await admin.command({ split: 'app.held', middle: { _id: 100 } });
    const held = router.db('app').collection<AnyDoc>('held');
    await held.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: 100 + i })), { writeConcern: { w: 'majority' } });
    const recipient = sets.rs1;
    const recipientPrimary = await primaryOf(recipient);
    const secondaries = recipient.nodes.filter((_, i) => recipient.hosts[i] !== recipientPrimary);
    const resume = (): void => { for (const n of secondaries) n.child.kill('SIGCONT'); };
    p.beforeStop(resume);
    let move: Promise<string>;
    const owner = async (): Promise<unknown> => (await router.db('config').collection<AnyDoc>('chunks').findOne({ 'min._id': 100 }))?.shard;
    for (const n of secondaries) n.child.kill('SIGSTOP');
    try {
      move = admin.command({ moveChunk: 'app.held', find: { _id: 100 }, to: 'rs1' }).then(() => 'ok', (err: Error) => err.message);
      const early = await Promise.race([move, new Promise((r) => setTimeout(r, 4000)).then(() => 'waiting')]);
      assert.equal(early, 'waiting', 'the move does not end while the recipient cannot replicate');
      assert.equal(await owner(), 'rs0');
    } finally {
      resume();
    }
    assert.equal(await move, 'ok');
    assert.equal(await owner(), 'rs1');
    assert.equal(await held.countDocuments({}), 20);
    assert.equal(await member(await primaryOf(recipient)).db('app').collection('held').countDocuments({}), 20);
    await everyMemberUp(recipient);
  });

  // The donor's side of the same: a write the donor primary took w: 1 while its secondaries cannot
  // replicate is cloned by the recipient, and the move waits at the critical section until the
  // donor's set holds it.
  it("a donor whose secondaries cannot replicate its writes does not let the move commit", { timeout: 180_000 }, async () => {
    const admin = router.db('admin');
    await admin.command({ shardCollection: 'app.donated', key: { _id: 1 } });
    await admin.command({ split: 'app.donated', middle: { _id: 100 } });
    const donated = router.db('app').collection<AnyDoc>('donated');
    await donated.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: 100 + i })), { writeConcern: { w: 'majority' } });
    const donor = sets.rs0;
    const donorPrimary = await primaryOf(donor);
    const paused = member(donorPrimary).db('admin');
    const FAIL_POINT = 'hangBeforeEnteringCriticalSection';
    const secondaries = donor.nodes.filter((_, i) => donor.hosts[i] !== donorPrimary);
    const resume = (): void => { for (const n of secondaries) n.child.kill('SIGCONT'); };
    p.beforeStop(resume);
    const owner = async (): Promise<unknown> => (await router.db('config').collection<AnyDoc>('chunks').findOne({ 'min._id': 100, uuid: (await router.db('config').collection<AnyDoc>('collections').findOne({ _id: 'app.donated' as never }))?.uuid }))?.shard;
    const { count } = await paused.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn' });
    const move = admin.command({ moveChunk: 'app.donated', find: { _id: 100 }, to: 'rs1' }).then(() => 'ok', (err: Error) => err.message);
    try {
      await paused.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 60_000 });
      for (const n of secondaries) n.child.kill('SIGSTOP');
      await donated.insertOne({ _id: 150 }, { writeConcern: { w: 1 } });
      await paused.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      const early = await Promise.race([move, new Promise((r) => setTimeout(r, 4000)).then(() => 'waiting')]);
      assert.equal(early, 'waiting', 'the move does not end while the donor cannot replicate');
      assert.equal(await owner(), 'rs0');
    } finally {
      await paused.command({ configureFailPoint: FAIL_POINT, mode: 'off' }).catch(() => undefined);
      resume();
    }
    assert.equal(await move, 'ok');
    assert.equal(await owner(), 'rs1');
    assert.equal(await donated.countDocuments({}), 21);
    await everyMemberUp(donor);
  });

  // A two-phase commit whose participant's primary steps down while the transaction is prepared
  // there: the new primary holds it from its replicated record and commits it at the coordinator's
  // decision; the deposed primary lets go of it. rs1 coordinates (written first) and rs0 steps down.
  it("a transaction prepared on rs0 commits on rs0's new primary after a step-down", { timeout: 180_000 }, async (t) => {
    const admin = router.db('admin');
    await admin.command({ shardCollection: 'app.pay', key: { _id: 1 } });
    await admin.command({ split: 'app.pay', middle: { _id: 100 } });
    await admin.command({ moveChunk: 'app.pay', find: { _id: 100 }, to: 'rs1' });
    const pay = router.db('app').collection<AnyDoc>('pay');
    await pay.insertMany([{ _id: 1, n: 0 }, { _id: 101, n: 0 }], { writeConcern: { w: 'majority' } });
    const coordinator = member(await primaryOf(sets.rs1)).db('admin');
    const participant = await primaryOf(sets.rs0);
    const FAIL_POINT = 'hangBeforeWritingDecision';
    const { count } = await coordinator.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn' });
    const session = router.startSession();
    try {
      session.startTransaction();
      await pay.updateOne({ _id: 101 }, { $inc: { n: 1 } }, { session });
      await pay.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session });
      const committed = session.commitTransaction().then(() => 'ok', (err: Error) => err.message);
      try {
        await coordinator.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 60_000 });
        await member(participant).db('admin').command({ replSetStepDown: 10, secondaryCatchUpPeriodSecs: 5 }).catch(() => undefined);
        t.diagnostic(`rs0's new primary ${await primaryOf(sets.rs0, participant)} (was ${participant})`);
      } finally {
        await coordinator.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      }
      assert.equal(await committed, 'ok');
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await pay.find({}, { sort: { _id: 1 } }).toArray(), [{ _id: 1, n: 1 }, { _id: 101, n: 1 }]);
    const prepared = await member(await primaryOf(sets.rs0)).db('config').collection('transactions').countDocuments({ state: 'prepared' });
    assert.equal(prepared, 0, "rs0's new primary holds nothing prepared");
    await everyMemberUp(sets.rs0);
  });
});
