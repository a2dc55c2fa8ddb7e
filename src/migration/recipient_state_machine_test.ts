import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { MinKey, serializeDocument } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { RecipientEffect, RecvChunkStartRequest } from './recipient_effects.js';
import { recipientInitialState, recipientStatus, recipientStep, type RecipientEvent, type RecipientPhase, type RecipientState } from './recipient_state_machine.js';

const migrationId = new UUID('11111111-2222-4333-8444-555555555555');
const request: RecvChunkStartRequest = {
  migrationId,
  nss: 'db.c',
  collectionUuid: new UUID('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'),
  donorShardId: 's0',
  recipientShardId: 's1',
  range: { min: { a: new MinKey() }, max: { a: 100 } },
};
const bson = (n: number) => serializeDocument({ _id: n, a: n });
const ev = {
  start: { type: 'recvChunkStart', request, overlappingRangeDeletions: 0 } as RecipientEvent,
  batch: (...ids: number[]): RecipientEvent => ({ type: 'cloneBatch', documents: ids.map(bson) }),
  mods: (reload: number[], deleted: number[] = [], pending?: number): RecipientEvent => ({
    type: 'transferModsBatch', reload: reload.map(bson), deleted: deleted.map((n) => serializeDocument({ _id: n })), ...(pending !== undefined ? { pending } : {}),
  }),
  status: { type: 'recvChunkStatus', migrationId } as RecipientEvent,
  commit: { type: 'recvChunkCommit', migrationId } as RecipientEvent,
  abort: { type: 'recvChunkAbort', migrationId } as RecipientEvent,
  failed: { type: 'failed', error: new MongoError(ErrorCodes.HostUnreachable, 'donor unreachable') } as RecipientEvent,
  sessions: (entries: number, done: boolean): RecipientEvent => ({
    type: 'sessionModsBatch', entries: Array.from({ length: entries }, (_, i) => ({ lsid: { n: i }, txnNum: 1, stmts: [] })), last: { n: entries }, done,
  }),
};

// Effects shown compactly: requests and applies by name, replies as reply:<command>:<state|code>.
function show(e: RecipientEffect): string {
  if (e.type !== 'reply') return e.type;
  return `reply:${e.command}:${e.result instanceof MongoError ? e.result.code : e.result.state}`;
}

type Line = [RecipientEvent, RecipientPhase, string[]];

function run(script: Line[], from: RecipientState = recipientInitialState()): RecipientState {
  let state = from;
  script.forEach(([event, phase, effects], i) => {
    const step = recipientStep(state, event);
    assert.deepEqual([step.state.phase, step.effects.map(show)], [phase, effects], `line ${i + 1}: ${event.type} in ${state.phase}`);
    state = step.state;
  });
  return state;
}

const toSteady: Line[] = [
  [ev.start, 'kClone', ['persistRangeDeletionTask', 'reply:_recvChunkStart:clone', 'createCollectionAndIndexes', 'requestCloneBatch']],
  [ev.batch(1, 2), 'kClone', ['requestCloneBatch', 'applyCloneBatch']],
  [ev.status, 'kClone', ['reply:_recvChunkStatus:clone']],
  [ev.batch(3), 'kClone', ['requestCloneBatch', 'applyCloneBatch']],
  [ev.batch(), 'kCatchup', ['syncClonedDocuments', 'requestTransferMods']],
  [ev.mods([2], [3]), 'kCatchup', ['requestTransferMods', 'applyMods']],
  [ev.mods([]), 'kSteady', ['requestTransferMods']],
  [ev.status, 'kSteady', ['reply:_recvChunkStatus:steady']],
];

test('a recipient clones, catches up, reaches steady and commits after a drain', () => {
  const state = run([
    ...toSteady,
    [ev.mods([4]), 'kSteady', ['requestTransferMods', 'applyMods']],
    [ev.commit, 'kCommitStart', []],
    // The answer to the request sent before the commit proves nothing: ask once more.
    [ev.mods([]), 'kCommitStart', ['requestTransferMods']],
    [ev.mods([5]), 'kCommitStart', ['requestTransferMods', 'applyMods']],
    // The drain ended: the sessions' history of the range comes next, then the commit is answered.
    [ev.mods([]), 'kCommitStart', ['requestSessionMods']],
    [ev.sessions(2, false), 'kCommitStart', ['applySessionMods', 'requestSessionMods']],
    [ev.sessions(0, true), 'kDone', ['reply:_recvChunkCommit:done']],
  ]);
  assert.deepEqual(recipientStatus(state).counts, { cloned: 3, clonedBytes: [1, 2, 3].reduce((n, i) => n + bson(i).byteLength, 0), catchup: 2, steady: 2 });
});

// Found by the crash matrix: the last batch was applied after the machine had reached kDone, so
// when applying it failed the commit was never answered and the donor waited in its critical
// section until it timed out.
test('a failure to apply the last batch of the sessions\' history answers the commit with the error', () => {
  const applying = run([
    ...toSteady, [ev.commit, 'kCommitStart', []], [ev.mods([]), 'kCommitStart', ['requestTransferMods']], [ev.mods([]), 'kCommitStart', ['requestSessionMods']],
    [ev.sessions(1, true), 'kCommitStart', ['applySessionMods']],
  ]);
  run([[ev.failed, 'kFail', ['reply:_recvChunkCommit:6']], [{ type: 'sessionModsApplied' }, 'kFail', []]], applying);
});

test('the range deletion task is durable before the donor hears the recipient started', () => {
  const { effects } = recipientStep(recipientInitialState(), ev.start);
  const [persist] = effects;
  assert.ok(persist?.type === 'persistRangeDeletionTask' && persist.task.pending && persist.task.whenToClean === 'now' && persist.task._id.equals(migrationId));
  assert.deepEqual(effects.map((e) => e.type), ['persistRangeDeletionTask', 'reply', 'createCollectionAndIndexes', 'requestCloneBatch']);
});

test('a batch that leaves nothing pending on the donor ends the catch-up, one that leaves some does not', () => {
  const catchup = toSteady.slice(0, 5);
  const state = run([
    ...catchup,
    [ev.mods([6], [], 40), 'kCatchup', ['requestTransferMods', 'applyMods']],
    [ev.mods([7], [8], 0), 'kSteady', ['requestTransferMods', 'applyMods']],
    [ev.status, 'kSteady', ['reply:_recvChunkStatus:steady']],
  ]);
  assert.equal(recipientStatus(state).counts.catchup, 1 + 2, 'the last catch-up batch counts as catch-up');
});

test('polling in steady asks the driver to pause between empty answers, not while busy', () => {
  const state = run(toSteady);
  const busy = recipientStep(state, ev.mods([7])).effects[0];
  const idle = recipientStep(state, ev.mods([])).effects[0];
  assert.ok(busy?.type === 'requestTransferMods' && !busy.pause);
  assert.ok(idle?.type === 'requestTransferMods' && idle.pause);
});

test('a range with deletions pending on this shard is refused before anything is written', () => {
  const state = run([[{ ...ev.start, overlappingRangeDeletions: 1 } as RecipientEvent, 'kFail', ['reply:_recvChunkStart:117']]]);
  assert.match(state.errmsg!, /overlaps a range that is scheduled for deletion/);
});

test('a second start while a migration runs is ConflictingOperationInProgress', () => {
  run([...toSteady.slice(0, 1), [ev.start, 'kClone', ['reply:_recvChunkStart:117']]]);
});

test('a commit before steady is refused and the migration goes on', () => {
  run([...toSteady.slice(0, 2), [ev.commit, 'kClone', ['reply:_recvChunkCommit:96']]]);
});

const phases: [RecipientPhase, Line[]][] = [
  ['kClone', toSteady.slice(0, 2)],
  ['kCatchup', toSteady.slice(0, 5)],
  ['kSteady', toSteady],
  ['kCommitStart', [...toSteady, [ev.commit, 'kCommitStart', []]]],
];

for (const [phase, prefix] of phases) {
  const pendingCommit = phase === 'kCommitStart' ? ['reply:_recvChunkCommit:96'] : [];
  test(`an abort in ${phase} stops the migration and is acknowledged${pendingCommit.length ? ', failing the pending commit' : ''}`, () => {
    const state = run([...prefix, [ev.abort, 'kAbort', [...pendingCommit, 'reply:_recvChunkAbort:abort']]]);
    run([[ev.batch(9), 'kAbort', []], [ev.mods([9]), 'kAbort', []], [ev.status, 'kAbort', ['reply:_recvChunkStatus:abort']]], state);
  });
  test(`a failure in ${phase} is reported to the donor's next status poll`, () => {
    const failed = run([...prefix, [ev.failed, 'kFail', phase === 'kCommitStart' ? ['reply:_recvChunkCommit:6'] : []]]);
    assert.deepEqual(recipientStatus(failed).errmsg, 'donor unreachable');
  });
}

test('an abort after the recipient is done is acknowledged without undoing anything', () => {
  const done = run([
    ...toSteady, [ev.commit, 'kCommitStart', []], [ev.mods([]), 'kCommitStart', ['requestTransferMods']], [ev.mods([]), 'kCommitStart', ['requestSessionMods']],
    [ev.sessions(1, true), 'kCommitStart', ['applySessionMods']],
    [{ type: 'sessionModsApplied' }, 'kDone', ['reply:_recvChunkCommit:done']],
  ]);
  run([[ev.abort, 'kDone', ['reply:_recvChunkAbort:done']], [ev.failed, 'kDone', []]], done);
});

test('commands for another migration are refused, except an abort which has nothing to stop', () => {
  const state = run(toSteady.slice(0, 2));
  const other = new UUID();
  run([
    [{ type: 'recvChunkStatus', migrationId: other }, 'kClone', ['reply:_recvChunkStatus:96']],
    [{ type: 'recvChunkCommit', migrationId: other }, 'kClone', ['reply:_recvChunkCommit:96']],
    [{ type: 'recvChunkAbort', migrationId: other }, 'kClone', ['reply:_recvChunkAbort:ready']],
  ], state);
  run([[ev.abort, 'kReady', ['reply:_recvChunkAbort:ready']], [ev.status, 'kReady', ['reply:_recvChunkStatus:96']]]);
});
