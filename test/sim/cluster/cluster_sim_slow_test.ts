import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { replayCommand, runSeed, type PlantedBug, type SimOptions } from './cluster_sim.js';

// The whole-cluster simulator's CI budget, and the bugs it is there to catch. DOCSHARD_SIM_SEEDS
// runs more seeds than the budget.
const BUDGET = Number(process.env.DOCSHARD_SIM_SEEDS ?? 3);
const DURATION_MS = 12_000;

// The simulator's own command, as a person runs it: its report and its exit code.
async function simCommand(options: SimOptions): Promise<{ code: number; output: string }> {
  const args = replayCommand(options).replace(/^npm run sim -- /, '').split(' ');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/sim/cluster/sim_cli.ts', ...args], { maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: stdout };
  } catch (err) {
    const failed = err as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout };
  }
}

// The first of a few seeds that finds `bug`, and what it reported.
async function seedThatCatches(bug: PlantedBug): Promise<{ options: SimOptions; violations: readonly string[] }> {
  for (let seed = 1; seed <= 6; seed++) {
    const options: SimOptions = { seed, durationMs: 15_000, bug };
    const { violations } = await runSeed(options);
    if (violations.length > 0) return { options, violations };
  }
  assert.fail(`no seed from 1 to 6 caught ${bug}`);
}

describe('the whole-cluster simulator', { concurrency: 1 }, () => {
  it(`passes a budget of ${BUDGET} seeds: crashes, power loss, partitions, lost replies and clock jumps under CRUD, transactions, migrations and DDL`, async () => {
    for (let seed = 1; seed <= BUDGET; seed++) {
      const result = await runSeed({ seed, durationMs: DURATION_MS });
      assert.deepEqual(result.violations, [], `${replayCommand({ seed, durationMs: DURATION_MS })}\n${result.traceTail.join('\n')}`);
      assert.ok(Number((result.stats.transfers as { committed: number }).committed) > 0 && Number(result.stats.acked) > 0, JSON.stringify(result.stats));
    }
  });

  it('replays a seed exactly: the same steps in the same order', async () => {
    const first = await runSeed({ seed: 42, durationMs: 3_000 });
    const second = await runSeed({ seed: 42, durationMs: 3_000 });
    assert.ok(first.steps > 1000);
    assert.deepEqual(second.trace, first.trace);
  });

  for (const [bug, finding] of [
    ['migrationSkipsCriticalSection', /acknowledged|bank|owned by/],
    ['commitAfterAbortVote', /bank/],
  ] as const) {
    it(`catches a planted bug (${bug}) and reports the command that replays it`, async () => {
      const { options, violations } = await seedThatCatches(bug);
      assert.match(violations.join('\n'), finding);
      const { code, output } = await simCommand(options);
      assert.equal(code, 1, output);
      assert.ok(output.includes(`replay: ${replayCommand(options)}`), output);
      assert.ok(output.includes(violations[0]!), `the replay reports ${violations[0]}:\n${output}`);
    });
  }
});
