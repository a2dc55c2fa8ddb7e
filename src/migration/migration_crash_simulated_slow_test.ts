import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { ErrorCodes } from '../base/error_codes.js';
import type { MigrationDecision } from './migration_coordinator_document.js';
import { checkDonorOrdering } from './migration_test_util.js';
import { runMigrationWorld, type ConfigFault, type Crash, type WorldEnd, type WorldOptions } from '../../test/sim/migration_world.js';
import { DONOR, RECIPIENT, writeTemplateDisks, type Disks } from '../../test/sim/migration_world_setup.js';
import { simDiskRoot } from '../../test/sim/sim_storage.js';

// The crash matrix, run on the real drivers (MigrationSourceManager, MigrationDestinationManager,
// the range deleter, coordinator recovery at startup), each shard on its own LMDB disk, under the
// deterministic simulator of test/sim (see this folder's README). A shard crashes before any of
// the effects its drivers run, once or twice, both shards crash, the config server loses or
// delays the commit, the disk lags behind every message, messages are delivered in seeded
// orders; a router writes to the range all along. Every run must end the same way: one owner
// with every acknowledged write, nothing left of the migration on either shard.

let root: string;
let templates: Disks;
let runs = 0;
// The run without faults, and how many effects the drivers ran in it: the crash points.
let faultless: WorldEnd;
let total: number;

before(async () => {
  root = simDiskRoot();
  templates = await writeTemplateDisks(path.join(root, 'templates'));
  faultless = await world();
  total = faultless.effectsRun;
});

after(() => rmSync(root, { recursive: true, force: true }));

function world(options: WorldOptions = {}): Promise<WorldEnd> {
  return runMigrationWorld(templates, path.join(root, `run${runs++}`), options);
}

// A broken connection, or a donor interrupted by a step-down (whose recovery decides later), says
// nothing of how the migration ended.
const OUTCOME_UNKNOWN: ReadonlySet<unknown> = new Set([ErrorCodes.HostUnreachable, ErrorCodes.SocketException, ErrorCodes.InterruptedDueToReplStateChange]);

// The end state every run must reach, whatever crashed and when; returns how the migration ended.
function check(end: WorldEnd, label: string): MigrationDecision {
  const at = (what: string): string => `${label}: ${what}`;
  assert.deepEqual(end.problems, [], at('nothing failed unexpectedly'));
  assert.ok(end.workloadDone, at('every write was acknowledged'));
  assert.ok(end.rangeOwner === DONOR || end.rangeOwner === RECIPIENT, at(`the range has a shard of the migration as owner, not ${end.rangeOwner}`));
  const decision: MigrationDecision = end.rangeOwner === RECIPIENT ? 'committed' : 'aborted';
  for (const [name, shard] of Object.entries(end.shards)) {
    assert.equal(shard.coordinatorDocuments, 0, at(`${name} has no coordinator document`));
    assert.deepEqual(shard.tasks, [], at(`${name} has no range deletion task left`));
    assert.equal(shard.criticalSectionHeld, false, at(`${name} holds no critical section`));
    assert.equal(shard.migrating, false, at(`${name} has no migration registered`));
  }
  const [owner, other] = decision === 'committed' ? [end.shards.shard1, end.shards.shard0] : [end.shards.shard0, end.shards.shard1];
  assert.deepEqual(owner.inRange, end.expected.inRange, at(`the owner (${end.rangeOwner}) has every document of the range, as last written`));
  assert.deepEqual(other.inRange, [], at('the other shard has none'));
  assert.deepEqual(end.shards.shard0.outside, end.expected.outside, at('the donor keeps the rest of the collection'));
  assert.deepEqual(end.shards.shard1.outside, [], at('the recipient has nothing outside the range'));
  // A kill -9 cannot make the counters drift: what a restarted shard finds on its disk is exact,
  // except a recipient's pending task once the range is its own (its writers are no orphans).
  for (const { shard, task, docsInRange, rangeOwner } of end.tasksAtRestarts) {
    if (task.pending && task.donorShardId === shard) assert.equal(task.numOrphanDocs, 0, at(`${shard}'s pending task counts no orphans`));
    else if (!task.pending || rangeOwner !== shard) assert.equal(task.numOrphanDocs, docsInRange, at(`${shard}'s task counts the ${docsInRange} documents of its range`));
  }
  for (const life of end.donorLives) checkDonorOrdering(life.effects, life.recovered);
  const reply = end.moveReply;
  assert.ok(reply !== undefined, at('the donor answered _shardsvrMoveRange'));
  if (reply.ok === 1) assert.equal(decision, 'committed', at('moveRange succeeded, so the migration committed'));
  else if (!OUTCOME_UNKNOWN.has(reply.code)) assert.equal(decision, 'aborted', at(`moveRange failed (${String(reply.errmsg)}), so the migration aborted`));
  return decision;
}

function label(options: WorldOptions): string {
  const crashes = (options.crashes ?? []).map((c: Crash) => `${c.shard} before effect ${c.at}`).join(', ');
  const stepDowns = (options.stepDowns ?? []).map((c: Crash) => `${c.shard} before effect ${c.at}`).join(', ');
  return [options.configFault, crashes === '' ? undefined : `crash ${crashes}`, stepDowns === '' ? undefined : `step-down ${stepDowns}`, options.slowDisk === true ? 'slow disk' : undefined, options.seed === undefined ? undefined : `seed ${options.seed}`]
    .filter((s) => s !== undefined).join(', ') || 'no fault';
}

async function checked(options: WorldOptions): Promise<MigrationDecision> {
  return check(await world(options), label(options));
}

test('without faults the real drivers commit, the recipient owns every document, and the donor deletes its copy', () => {
  assert.equal(check(faultless, 'no fault'), 'committed');
  assert.deepEqual(faultless.moveReply, { ok: 1 });
  assert.ok(total > 20, `the drivers ran their effects (${total})`);
});

test('with _waitForDelete the donor answers once its copy is deleted', async () => {
  const end = await world({ waitForDelete: true });
  assert.equal(check(end, 'waitForDelete'), 'committed');
  assert.ok(end.donorLives[0]!.effects.some((e) => e.type === 'awaitRangeDeletion'));
});

test('a crash of the donor before any of its effects ends committed or aborted, with one owner', async () => {
  const outcomes = new Set<MigrationDecision>();
  for (let at = 0; at < total; at++) outcomes.add(await checked({ crashes: [{ at, shard: DONOR }] }));
  assert.deepEqual([...outcomes].sort(), ['aborted', 'committed'], 'both outcomes are reached');
});

test('a crash of the recipient before any effect ends committed or aborted, with one owner', async () => {
  for (let at = 0; at < total; at++) await checked({ crashes: [{ at, shard: RECIPIENT }] });
});

// Issue 32: a step-down interrupts the drivers where they are (no process exit), and the same
// node, primary again, recovers the migration from its coordinator document.
test('a step-down and step-up of the donor or the recipient before any effect ends committed or aborted, with one owner', async () => {
  const outcomes = new Set<MigrationDecision>();
  for (let at = 0; at < total; at++) {
    for (const shard of [DONOR, RECIPIENT]) outcomes.add(await checked({ stepDowns: [{ at, shard }] }));
  }
  assert.deepEqual([...outcomes].sort(), ['aborted', 'committed'], 'both outcomes are reached');
});

test('a step-down whose storage refuses writes before the drivers hear of it ends committed or aborted, with one owner and no process exit', async () => {
  for (let at = 0; at < total; at++) {
    for (const shard of [DONOR, RECIPIENT]) await checked({ stepDowns: [{ at, shard, fencedFirst: true }] });
  }
});

// Soak run: the step-down interrupted the donors before the new migration's driver existed; the
// driver then waited for an interruption that had come and gone, and the step-down (and so the
// next step-up, and the node's shutdown) waited for the driver.
test('a step-down of the donor while its migration is still starting ends aborted, with one owner, and the donor primary again', async () => {
  assert.equal(await checked({ stepDownWhileStarting: true }), 'aborted');
});

test('a donor that crashes again while recovering still finishes the migration', async () => {
  for (let at = 0; at < total; at++) {
    for (const again of [1, 2, 3]) await checked({ crashes: [{ at, shard: DONOR }, { at: at + again, shard: DONOR }] });
  }
});

test('both shards crashing at different points still leave exactly one owner', async () => {
  for (let at = 0; at < total; at += 2) await checked({ crashes: [{ at, shard: RECIPIENT }, { at: at + 1, shard: DONOR }] });
});

test('a lost commit reply is resolved from the config server: committed if the commit landed', async () => {
  assert.equal(await checked({ configFault: 'commitReplyLost' }), 'committed');
  assert.equal(await checked({ configFault: 'commitRequestLost' }), 'aborted');
});

test('a donor that cannot reach the config server to look up the hosts for _recvChunkStart aborts the migration and keeps running', async () => {
  assert.equal(await checked({ configFault: 'shardsLookupLost' }), 'aborted');
});

test('a commit that reaches the config server after the fence fails, so an abort stands', async () => {
  assert.equal(await checked({ configFault: 'commitDelayed' }), 'aborted');
});

test('a config server that loses or delays the commit and then the donor crashing still converge', async () => {
  for (const configFault of ['commitReplyLost', 'commitRequestLost', 'commitDelayed'] as const satisfies readonly ConfigFault[]) {
    for (let at = 0; at < total; at++) await checked({ configFault, crashes: [{ at, shard: DONOR }] });
  }
});

test('a slow disk (every message overtakes its commits and flushes) and a crash of either shard before any effect still converge', async () => {
  for (let at = 0; at < total; at++) {
    for (const shard of [DONOR, RECIPIENT]) await checked({ slowDisk: true, crashes: [{ at, shard }] });
  }
});

test('messages delivered in seeded orders, with a crash of either shard, converge the same way', async () => {
  for (let seed = 1; seed <= 24; seed++) {
    const crashes: Crash[] = seed % 3 === 0 ? [] : [{ at: (seed * 7) % total, shard: seed % 3 === 1 ? DONOR : RECIPIENT }];
    await checked({ seed, crashes });
  }
});

test('a seed replays exactly', async () => {
  const options: WorldOptions = { seed: 5, crashes: [{ at: 9, shard: DONOR }] };
  const [first, second] = [await world(options), await world(options)];
  assert.deepEqual(second.trace, first.trace);
  assert.ok(first.trace.length > 50);
});

