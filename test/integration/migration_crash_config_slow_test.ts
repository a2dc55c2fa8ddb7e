import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CrashWorld, until } from '../helpers/migration_crash.js';

// The crash matrix of issue 4, config server part: pause a migration at a donor step, kill -9 the
// config server there, restart it on the same dbpath and port, and check that the migration ended
// committed or aborted with exactly one owner of the range, that nothing acknowledged was lost,
// and that routers and shards talk to the restarted config server (a migration after it works).

interface ConfigCrashCase {
  readonly failPoint: string;
  // Where the fail point is: a donor step, or the config server's own pause after it wrote the
  // commit and before it answers (the kill then loses the reply of an applied commit).
  readonly failPointOn?: 'config';
  // 'paused': the config server is back before the donor goes on, so the commit reaches it.
  // 'down': the donor goes on while the config server is down, up to `until`, then it restarts.
  readonly releaseWhile: 'paused' | 'down';
  // What the donor reaches while the config server is down ('down' only): 'recovering', its
  // commit failed and it fences the config server until it answers; 'forgotten', it finished.
  readonly until?: 'recovering' | 'forgotten';
  // Writes to the range while paused, before the kill or while the config server is down:
  // 'acked' must be acknowledged then (the donor takes them on its cached routing, without the
  // config server); 'inflight' are settled only after the restart (held back by the donor's
  // critical section, or by a router that must refresh): each may fail, and be applied or not.
  readonly writes: 'acked' | 'inflight';
  readonly writesWhen: 'beforeKill' | 'whileDown';
  readonly ends: 'donor' | 'recipient';
  readonly why: string;
}

const CASES: readonly ConfigCrashCase[] = [
  { failPoint: 'moveChunkHangAtStep3', releaseWhile: 'paused', writes: 'acked', writesWhen: 'whileDown', ends: 'recipient', why: 'cloning: the donor commits on the restarted config server' },
  { failPoint: 'moveChunkHangAtStep5', releaseWhile: 'paused', writes: 'inflight', writesWhen: 'beforeKill', ends: 'recipient', why: 'critical section: the donor commits on the restarted config server' },
  { failPoint: 'moveChunkHangAtStep5', releaseWhile: 'down', until: 'recovering', writes: 'inflight', writesWhen: 'beforeKill', ends: 'donor', why: 'the commit finds the config server down: the donor fences it once back, owner unchanged, abort' },
  { failPoint: 'hangBeforeCommitChunkMigrationReply', failPointOn: 'config', releaseWhile: 'down', until: 'recovering', writes: 'inflight', writesWhen: 'beforeKill', ends: 'recipient', why: 'the commit is applied, its reply lost: the donor fences the restarted config server and reads the new owner' },
  { failPoint: 'moveChunkHangAtStep6', releaseWhile: 'down', until: 'forgotten', writes: 'inflight', writesWhen: 'beforeKill', ends: 'recipient', why: 'committed before the crash: the commit survives, the donor finishes without the config server' },
  { failPoint: 'moveChunkHangAtStep7', releaseWhile: 'paused', writes: 'inflight', writesWhen: 'whileDown', ends: 'recipient', why: 'after the cleanup: stale routers recover through the restarted config server' },
];

describe('a migration survives kill -9 of the config server at the donor steps', () => {
  let world: CrashWorld;

  before(async () => {
    world = await CrashWorld.start();
  });

  after(async () => {
    await world?.stop();
  });

  for (const [i, c] of CASES.entries()) {
    // _ids of this case's writes start with it.
    const tag = `config-case${i}`;
    const name = `${c.failPoint}, kill -9 the config server, released while ${c.releaseWhile === 'paused' ? 'paused' : `down until ${c.until}`}: ends on the ${c.ends} (${c.why})`;
    it(name, async (t) => {
      const donor = await world.ownerOfRange();
      const recipient = 1 - donor;
      await world.writeAcked(`${tag}-before`);

      const onConfig = c.failPointOn === 'config';
      const paused = await world.failPoint(onConfig ? 'config' : donor, c.failPoint);
      const move = world.moveRange(recipient);
      await paused();
      let settle = async (): Promise<string> => 'acknowledged before the crash';
      const write = async (): Promise<void> => {
        if (c.writes === 'acked') {
          await world.writeAcked(`${tag}-paused`);
        } else {
          settle = world.startWrites(`${tag}-paused`);
          await sleep(200);
        }
      };

      if (c.writesWhen === 'beforeKill') await write();
      await world.killConfig();
      // The router loses the config server under the moveChunk it forwarded there.
      assert.ok((await move) instanceof Error, 'the moveChunk fails with the config server');
      if (c.writesWhen === 'whileDown') await write();
      if (c.releaseWhile === 'paused') {
        await world.restartConfig();
        await world.failPointOff(donor, c.failPoint);
      } else {
        // A fail point on the config server died with it.
        if (!onConfig) await world.failPointOff(donor, c.failPoint);
        if (c.until === 'recovering') await until('the donor recovers its commit', async () => (await world.donorPhase(donor)) === 'kRecovering');
        else await until('the donor forgets the migration', async () => (await world.countOn(donor, 'config', 'migrationCoordinators', {})) === 0);
        // A few retries against the dead config server.
        await sleep(500);
        await world.restartConfig();
      }
      t.diagnostic(`writes while paused: ${await settle()}`);

      t.diagnostic(await world.checkEnd(donor, c.ends === 'donor' ? donor : recipient));
      assert.equal((await world.router.db('admin').command({ balancerStatus: 1 })).mode, 'off', 'the balancer stays stopped across the restart');
      // The restarted config server serves a whole migration, and the router routes by it.
      const owner = c.ends === 'donor' ? donor : recipient;
      assert.equal(await world.moveRange(1 - owner), undefined, 'a migration after the restart commits');
      await world.checkEnd(owner, 1 - owner);
    });
  }
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
