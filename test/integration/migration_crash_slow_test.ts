import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CrashWorld } from '../helpers/migration_crash.js';

// The crash matrix of issue 4 on real processes: pause a migration at a step with a fail point,
// kill -9 the donor or the recipient there, restart it on the same dbpath and port, and check that
// the migration ended with exactly one owner of the range, every document on it, and nothing lost.
// (The config server's part is migration_crash_config_slow_test.ts.)

interface CrashCase {
  readonly failPoint: string;
  readonly victim: 'donor' | 'recipient';
  // Writes to the range while the migration is paused: 'acked' when the donor accepts them at
  // this step (they are acknowledged before the crash); 'inflight' when its critical section holds
  // them back (they are still waiting when the crash comes, so each may fail, and then may or
  // may not have been applied).
  readonly writes: 'acked' | 'inflight';
  // Where the range must end up: only a commit the config server applied before the crash moves it.
  readonly ends: 'donor' | 'recipient';
}

// migration_fail_points.ts: the donor's steps 1 start, 2 recipient started cloning, 3 recipient
// steady, 4 writes blocked, 5 recipient committed, 6 config server committed, 7 cleaned up; the
// recipient's 1 started, 2 indexes created, 3 clone done, 4 caught up, 5 commit answered.
const CASES: readonly CrashCase[] = [
  { failPoint: 'moveChunkHangAtStep1', victim: 'donor', writes: 'acked', ends: 'donor' },
  { failPoint: 'moveChunkHangAtStep2', victim: 'donor', writes: 'acked', ends: 'donor' },
  { failPoint: 'moveChunkHangAtStep3', victim: 'donor', writes: 'acked', ends: 'donor' },
  { failPoint: 'moveChunkHangAtStep4', victim: 'donor', writes: 'inflight', ends: 'donor' },
  { failPoint: 'moveChunkHangAtStep5', victim: 'donor', writes: 'inflight', ends: 'donor' },
  { failPoint: 'moveChunkHangAtStep6', victim: 'donor', writes: 'inflight', ends: 'recipient' },
  { failPoint: 'moveChunkHangAtStep7', victim: 'donor', writes: 'acked', ends: 'recipient' },
  { failPoint: 'migrateThreadHangAtStep1', victim: 'recipient', writes: 'acked', ends: 'donor' },
  { failPoint: 'migrateThreadHangAtStep2', victim: 'recipient', writes: 'acked', ends: 'donor' },
  { failPoint: 'migrateThreadHangAtStep3', victim: 'recipient', writes: 'acked', ends: 'donor' },
  { failPoint: 'migrateThreadHangAtStep4', victim: 'recipient', writes: 'acked', ends: 'donor' },
  // The recipient pauses after answering the commit: the donor commits, leaves its critical
  // section, and the writes go to the recipient, which must keep them through its crash.
  { failPoint: 'migrateThreadHangAtStep5', victim: 'recipient', writes: 'acked', ends: 'recipient' },
];

describe('a migration survives kill -9 of the donor or the recipient at its steps', () => {
  let world: CrashWorld;

  before(async () => {
    world = await CrashWorld.start();
  });

  after(async () => {
    await world?.stop();
  });

  for (const c of CASES) {
    it(`${c.failPoint}, kill -9 the ${c.victim}: the range ends on the ${c.ends}`, async (t) => {
      const donor = await world.ownerOfRange();
      const recipient = 1 - donor;
      await world.writeAcked(`${c.failPoint}-before`);

      const victim = c.victim === 'donor' ? donor : recipient;
      const paused = await world.failPoint(victim, c.failPoint);
      const move = world.moveRange(recipient);
      await paused();
      let settle = async (): Promise<string> => 'acknowledged before the crash';
      if (c.writes === 'acked') {
        await world.writeAcked(`${c.failPoint}-paused`);
      } else {
        settle = world.startWrites(`${c.failPoint}-paused`);
        await sleep(200);
      }

      await world.restartShard(victim);
      // The moveChunk fails when the donor dies; when the recipient dies the donor aborts (or
      // commits, past the recipient's commit) once it is back. Either way it ends.
      const outcome = await move;
      t.diagnostic(`writes while paused: ${await settle()}`);
      if (c.victim === 'donor') assert.ok(outcome instanceof Error, 'the donor died under the moveChunk');
      else assert.equal(outcome === undefined, c.ends === 'recipient', `moveChunk's reply matches the outcome: ${String(outcome)}`);

      t.diagnostic(await world.checkEnd(donor, c.ends === 'donor' ? donor : recipient));
    });
  }

  // Found by this matrix: an update or delete the router broadcasts (no shard key in the filter)
  // reached the donor's orphans too, between the commit and the range deletion (the update failed
  // with WouldChangeOwningShard, the delete removed and counted the orphans). Shards now skip
  // documents they do not own in routed writes, as MongoDB's write stages do.
  // Last: it leaves a delayed range deletion task on a collection of its own.
  it('a broadcast updateMany / deleteMany skips orphans', async () => {
    const admin = world.router.db('admin');
    await admin.command({ shardCollection: 'mc.o', key: { k: 1 } });
    await admin.command({ split: 'mc.o', middle: { k: 5 } });
    const coll = world.router.db('mc').collection('o');
    await coll.insertMany(Array.from({ length: 10 }, (_, i) => ({ k: i })));
    const { shard } = (await world.router.db('config').collection('chunks').findOne({ 'min.k': 5 }))!;
    const other = shard === 'shard0' ? 'shard1' : 'shard0';
    // Without _waitForDelete the donor keeps its copy of [MinKey, 5) for orphanCleanupDelaySecs.
    await admin.command({ moveChunk: 'mc.o', find: { k: 0 }, to: other });
    const problems: string[] = [];
    try {
      const { modifiedCount } = await coll.updateMany({}, { $set: { v: 1 } });
      if (modifiedCount !== 10) problems.push(`updateMany modified ${modifiedCount} of 10`);
    } catch (err) {
      problems.push(`updateMany failed: ${(err as Error).message}`);
    }
    try {
      const { deletedCount } = await coll.deleteMany({});
      if (deletedCount !== 10) problems.push(`deleteMany deleted ${deletedCount} of 10`);
    } catch (err) {
      problems.push(`deleteMany failed: ${(err as Error).message}`);
    }
    assert.deepEqual(problems, []);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
