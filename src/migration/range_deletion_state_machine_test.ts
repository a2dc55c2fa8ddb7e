import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, UUID } from 'bson';
import { rangeDeletionStart, rangeDeletionStep, type RangeDeletionEvent, type RangeDeletionState } from './range_deletion_state_machine.js';
import type { RangeDeletionTask } from './range_deletion_task.js';

const options = { batchSize: 3, batchDelayMs: 20, orphanCleanupDelayMs: 900_000 };
const task = (over: Partial<RangeDeletionTask> = {}): RangeDeletionTask => ({
  _id: new UUID(), nss: 't.c', collectionUuid: new UUID(), donorShardId: 's0', range: { min: { k: 0 }, max: { k: new MaxKey() } },
  pending: false, processing: false, whenToClean: 'now', numOrphanDocs: 0, orphanedSizeBytes: 0, ...over,
});

// The effects' types, a wait with its length.
function run(events: RangeDeletionEvent[], expedited = false, from?: RangeDeletionState): { state: RangeDeletionState; effects: string[] } {
  const first = from === undefined ? rangeDeletionStart(options, expedited) : { state: from, effects: [] };
  let { state } = first;
  const effects = first.effects.map(describe);
  for (const e of events) {
    const next = rangeDeletionStep(state, e);
    state = next.state;
    effects.push(...next.effects.map(describe));
  }
  return { state, effects };
}

function describe(e: { type: string; ms?: number; docs?: number }): string {
  if (e.type === 'wait') return `wait ${e.ms}`;
  if (e.type === 'countDeleted') return `countDeleted ${e.docs}`;
  return e.type;
}

test('a task to clean now is read twice, waits for routed reads before every batch, pauses between full batches, and is removed after a short one', () => {
  const t = task();
  const { state, effects } = run([
    { type: 'waited' }, { type: 'taskRead', task: t }, { type: 'taskRead', task: t }, { type: 'queriesDrained' }, { type: 'taskRead', task: t },
    { type: 'batchDeleted', docs: 3 }, { type: 'waited' }, { type: 'taskRead', task: t }, { type: 'queriesDrained' }, { type: 'taskRead', task: t },
    { type: 'batchDeleted', docs: 1 }, { type: 'taskRemoved' },
  ]);
  assert.deepEqual(effects, [
    'wait 0', 'readTask', 'readTask', 'awaitQueries', 'readTask', 'deleteBatch', 'countDeleted 3', 'wait 20',
    'readTask', 'awaitQueries', 'readTask', 'deleteBatch', 'countDeleted 1', 'removeTask', 'logFinished',
  ]);
  assert.equal(state.phase, 'done');
  assert.equal(state.deleted, 4);
});

test('a delayed task waits out orphanCleanupDelay unless it was already processing or is expedited', () => {
  const delayed = task({ whenToClean: 'delayed' });
  assert.deepEqual(run([{ type: 'waited' }, { type: 'taskRead', task: delayed }]).effects.slice(-1), ['wait 900000']);
  assert.deepEqual(run([{ type: 'waited' }, { type: 'taskRead', task: { ...delayed, processing: true } }]).effects.slice(-1), ['readTask']);
  assert.deepEqual(run([{ type: 'waited' }, { type: 'taskRead', task: delayed }], true).effects.slice(-1), ['readTask']);
  // An expedite during the delay ends it, and the batches count as expedited.
  const waiting = run([{ type: 'waited' }, { type: 'taskRead', task: delayed }]).state;
  const { state, effects } = run([{ type: 'expedite' }, { type: 'taskRead', task: delayed }, { type: 'queriesDrained' }, { type: 'taskRead', task: delayed }, { type: 'batchDeleted', docs: 2 }], false, waiting);
  assert.deepEqual(effects, ['cancelWait', 'readTask', 'awaitQueries', 'readTask', 'deleteBatch', 'countDeleted 2', 'removeTask']);
  assert.ok(state.expedited);
  const expeditedLate = run([{ type: 'expedite' }, { type: 'waited' }], false, waiting);
  assert.deepEqual(expeditedLate.effects, ['cancelWait', 'readTask'], 'a timer that fires after the expedite changes nothing');
});

test('a task gone or pending at any read ends the run without deleting', () => {
  const t = task();
  const prefixes: RangeDeletionEvent[][] = [
    [{ type: 'waited' }],
    [{ type: 'waited' }, { type: 'taskRead', task: t }],
    [{ type: 'waited' }, { type: 'taskRead', task: t }, { type: 'taskRead', task: t }, { type: 'queriesDrained' }],
  ];
  for (const prefix of prefixes) {
    const { state, effects } = run([...prefix, { type: 'taskRead', task: undefined }]);
    assert.equal(state.phase, 'done');
    assert.ok(!effects.includes('deleteBatch') && !effects.includes('removeTask'));
  }
});

test('a stop ends any wait at once, and a run waiting for routed reads at the next read', () => {
  const t = task({ whenToClean: 'delayed' });
  for (const prefix of [[], [{ type: 'waited' }, { type: 'taskRead', task: t }]] as RangeDeletionEvent[][]) {
    const { state, effects } = run([...prefix, { type: 'stop' }]);
    assert.equal(state.phase, 'done');
    assert.equal(effects[effects.length - 1], 'cancelWait');
  }
  const querying = run([{ type: 'waited' }, { type: 'taskRead', task: task() }, { type: 'taskRead', task: task() }, { type: 'stop' }]);
  assert.equal(querying.state.phase, 'awaitingQueries');
  const after = run([{ type: 'queriesDrained' }, { type: 'taskRead', task: task() }], false, querying.state);
  assert.deepEqual(after.effects, ['readTask']);
  assert.equal(after.state.phase, 'done');
});

test('events a phase does not expect change nothing, and nothing follows the end', () => {
  const reading = run([{ type: 'waited' }]).state;
  for (const e of [{ type: 'waited' }, { type: 'queriesDrained' }, { type: 'batchDeleted', docs: 3 }, { type: 'taskRemoved' }] as RangeDeletionEvent[]) {
    assert.deepEqual(rangeDeletionStep(reading, e), { state: reading, effects: [] });
  }
  const done = run([{ type: 'waited' }, { type: 'taskRead', task: undefined }]).state;
  assert.deepEqual(rangeDeletionStep(done, { type: 'taskRead', task: task() }), { state: done, effects: [] });
});
