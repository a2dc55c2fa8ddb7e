import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { donorEffectClass, type DonorEffect } from './donor_effects.js';
import { commitReplyOf, donorInitialState, donorStep, isDonorDone, type DonorEvent, type DonorPhase, type DonorState } from './donor_state_machine.js';
import type { RecvChunkStatus } from './recipient_effects.js';
import { checkDonorOrdering, coordinatorDoc } from './migration_test_util.js';

const doc = coordinatorDoc();
const counts = { cloned: 10, clonedBytes: 1000, catchup: 0, steady: 0 };
const status = (state: RecvChunkStatus['state'], errmsg?: string): DonorEvent => ({ type: 'recipientStatus', status: { state, counts, ...(errmsg ? { errmsg } : {}) }, transferModsPending: 3 });
const ev = {
  start: { type: 'start', doc, waitForDelete: false } as DonorEvent,
  ack: { type: 'recipientAcknowledgedStart' } as DonorEvent,
  entered: { type: 'criticalSectionEntered' } as DonorEvent,
  committed: { type: 'recipientCommitted' } as DonorEvent,
  configOk: { type: 'configCommitReplied', reply: { outcome: 'ok' } } as DonorEvent,
  abort: { type: 'abortRequested', error: new MongoError(ErrorCodes.ShutdownInProgress, 'shutting down') } as DonorEvent,
  recipientDown: { type: 'recipientError', error: new MongoError(ErrorCodes.HostUnreachable, 'connection refused') } as DonorEvent,
};

// A script: each line is an event, the phase it leads to and the effects it asks for.
type Line = [DonorEvent, DonorPhase, DonorEffect['type'][]];

function run(script: Line[], from: DonorState = donorInitialState()): { state: DonorState; log: DonorEffect[] } {
  let state = from;
  const log: DonorEffect[] = [];
  script.forEach(([event, phase, effects], i) => {
    const step = donorStep(state, event);
    assert.deepEqual([step.state.phase, step.effects.map((e) => e.type)], [phase, effects], `line ${i + 1}: ${event.type} in ${state.phase}`);
    state = step.state;
    log.push(...step.effects);
  });
  return { state, log };
}

const toCommitting: Line[] = [
  [ev.start, 'kCloning', ['persistCoordinatorDoc', 'persistRangeDeletionTask', 'sendRecvChunkStart']],
  [ev.ack, 'kCloning', ['pollRecvChunkStatus']],
  [status('clone'), 'kCloning', ['pollRecvChunkStatus']],
  [status('catchup'), 'kCloning', ['pollRecvChunkStatus']],
  [status('steady'), 'kCloneCaughtUp', ['enterCriticalSection']],
  [ev.entered, 'kCriticalSection', ['sendRecvChunkCommit']],
  [ev.committed, 'kCloneCompleted', ['enterCriticalSectionForReads']],
  [ev.entered, 'kCommittingOnConfig', ['sendCommitToConfig']],
];

test('a migration walks every phase in MongoDB\'s order and commits', () => {
  const { state, log } = run([
    ...toCommitting,
    [ev.configOk, 'kCommitted', ['persistDecision', 'hintRecipientRefresh', 'refreshFilteringMetadata', 'exitCriticalSection', 'deleteRecipientRangeDeletionTask', 'markRangeDeletionReady', 'deleteCoordinatorDoc']],
  ]);
  assert.equal(isDonorDone(state), true);
  assert.equal(state.error, undefined);
  checkDonorOrdering(log);
});

test('the donor persists its document and a pending delayed task before the recipient hears of it', () => {
  const [persistDoc, persistTask, send] = donorStep(donorInitialState(), ev.start).effects;
  assert.deepEqual(persistDoc, { type: 'persistCoordinatorDoc', doc });
  assert.ok(persistTask?.type === 'persistRangeDeletionTask' && persistTask.task.pending && persistTask.task.whenToClean === 'delayed');
  assert.ok(persistTask.task._id.equals(doc._id));
  assert.deepEqual([donorEffectClass(persistDoc!), donorEffectClass(persistTask), donorEffectClass(send!)], ['persist', 'persist', 'request']);
});

test('_waitForDelete cleans now and makes the reply wait for the range deleter', () => {
  const { log } = run([
    [{ ...ev.start, waitForDelete: true } as DonorEvent, 'kCloning', ['persistCoordinatorDoc', 'persistRangeDeletionTask', 'sendRecvChunkStart']],
    ...toCommitting.slice(1),
    [ev.configOk, 'kCommitted', ['persistDecision', 'hintRecipientRefresh', 'refreshFilteringMetadata', 'exitCriticalSection', 'deleteRecipientRangeDeletionTask', 'markRangeDeletionReady', 'deleteCoordinatorDoc', 'awaitRangeDeletion']],
  ]);
  const task = log.find((e) => e.type === 'persistRangeDeletionTask');
  assert.ok(task?.type === 'persistRangeDeletionTask' && task.task.whenToClean === 'now');
  checkDonorOrdering(log);
});

test('the clone progress the recipient reports is kept for currentOp', () => {
  const { state } = run(toCommitting.slice(0, 3));
  assert.deepEqual(state.progress, { recipientState: 'clone', clonedDocs: 10, clonedBytes: 1000, transferModsPending: 3 });
});

const ABORT_WITHOUT_CS: DonorEffect['type'][] = ['persistDecision', 'sendRecvChunkAbort', 'deleteRangeDeletionTask', 'markRecipientRangeDeletionReady', 'deleteCoordinatorDoc'];
const ABORT_WITH_CS: DonorEffect['type'][] = ['persistDecision', 'exitCriticalSection', 'sendRecvChunkAbort', 'deleteRangeDeletionTask', 'markRecipientRangeDeletionReady', 'deleteCoordinatorDoc'];

// Every phase before the commit is sent, with what an abort there must undo.
const abortable: [string, Line[], DonorEffect['type'][]][] = [
  ['kCloning (start unanswered)', toCommitting.slice(0, 1), ABORT_WITHOUT_CS],
  ['kCloning', toCommitting.slice(0, 3), ABORT_WITHOUT_CS],
  ['kCloneCaughtUp', toCommitting.slice(0, 5), ABORT_WITH_CS],
  ['kCriticalSection', toCommitting.slice(0, 6), ABORT_WITH_CS],
  ['kCloneCompleted', toCommitting.slice(0, 7), ABORT_WITH_CS],
];

for (const [name, prefix, undo] of abortable) {
  const phase = prefix.at(-1)![1];
  const causes: [string, DonorEvent][] = [
    ['an abort request', ev.abort],
    ['a timeout', { type: 'timeout', phase }],
    ['a recipient failure', ev.recipientDown],
  ];
  for (const [cause, event] of causes) {
    test(`${cause} in ${name} aborts: the decision is persisted, then undone on both shards`, () => {
      const { state, log } = run([...prefix, [event, 'kAborted', undo]]);
      assert.ok(state.error instanceof MongoError);
      checkDonorOrdering(log);
    });
  }
}

test('a timeout reports ExceededTimeLimit with the phase it expired in', () => {
  const { state } = run([...toCommitting.slice(0, 3), [{ type: 'timeout', phase: 'kCloning' }, 'kAborted', ABORT_WITHOUT_CS]]);
  assert.equal(state.error?.code, ErrorCodes.ExceededTimeLimit);
  assert.match(state.error!.message, /timed out in kCloning/);
});

test('a recipient that reports fail or abort aborts the migration with its message', () => {
  for (const s of ['fail', 'abort'] as const) {
    const { state, log } = run([...toCommitting.slice(0, 2), [status(s, 'disk full'), 'kAborted', ABORT_WITHOUT_CS]]);
    assert.equal(state.error?.message, 'Data transfer error: disk full');
    checkDonorOrdering(log);
  }
});

test('an abort before start persists nothing and undoes nothing', () => {
  run([[ev.abort, 'kAborted', []]]);
});

test('a timer armed in an earlier phase is stale and ignored', () => {
  run([...toCommitting.slice(0, 5), [{ type: 'timeout', phase: 'kCloning' }, 'kCloneCaughtUp', []]]);
});

test('late replies after an abort change nothing', () => {
  const { state } = run([...toCommitting.slice(0, 3), [ev.abort, 'kAborted', ABORT_WITHOUT_CS]]);
  for (const event of [status('steady'), ev.entered, ev.committed, ev.configOk, ev.ack, ev.abort]) {
    assert.deepEqual(donorStep(state, event), { state, effects: [] });
  }
});

test('once the commit is sent, aborts, timeouts and recipient failures are ignored', () => {
  const { state } = run(toCommitting);
  for (const event of [ev.abort, ev.recipientDown, { type: 'timeout', phase: 'kCommittingOnConfig' } as DonorEvent]) {
    assert.deepEqual(donorStep(state, event), { state, effects: [] });
  }
});

test('a commit error or a lost reply is resolved by fencing the config server, then reading the owner', () => {
  for (const outcome of ['error', 'unknown'] as const) {
    const reply: DonorEvent = { type: 'configCommitReplied', reply: { outcome, error: new MongoError(ErrorCodes.NetworkTimeout, 'timed out') } };
    const { state } = run([...toCommitting, [reply, 'kRecovering', ['sendEnsureChunkVersionIsGreaterThan', 'readConfigChunkOwner']]]);
    assert.deepEqual(donorStep(state, ev.abort), { state, effects: [] }, 'still past the point of no return');
  }
});

test('a commit the config server answered with a writeConcernError is resolved like a lost reply, not taken for done', () => {
  const deposed = commitReplyOf({ ok: 1, writeConcernError: { code: ErrorCodes.PrimarySteppedDown, codeName: 'PrimarySteppedDown', errmsg: 'Primary stepped down while waiting for replication' } });
  assert.equal(deposed.outcome, 'unknown');
  run([...toCommitting, [{ type: 'configCommitReplied', reply: deposed }, 'kRecovering', ['sendEnsureChunkVersionIsGreaterThan', 'readConfigChunkOwner']]]);
  assert.deepEqual(commitReplyOf({ ok: 1 }), { outcome: 'ok' });
  const refused = commitReplyOf({ ok: 0, code: ErrorCodes.ConflictingOperationInProgress, errmsg: 'chunk version changed' });
  assert.equal(refused.outcome === 'error' && refused.error.code, ErrorCodes.ConflictingOperationInProgress);
});

test('the owner the config server reports decides: the recipient means committed', () => {
  const reply: DonorEvent = { type: 'configCommitReplied', reply: { outcome: 'unknown', error: new MongoError(ErrorCodes.NetworkTimeout, 'timed out') } };
  const { state, log } = run([
    ...toCommitting,
    [reply, 'kRecovering', ['sendEnsureChunkVersionIsGreaterThan', 'readConfigChunkOwner']],
    [{ type: 'configChunkOwnerRead', shardId: 's1' }, 'kCommitted', ['persistDecision', 'hintRecipientRefresh', 'refreshFilteringMetadata', 'exitCriticalSection', 'deleteRecipientRangeDeletionTask', 'markRangeDeletionReady', 'deleteCoordinatorDoc']],
  ]);
  assert.equal(state.error, undefined);
  checkDonorOrdering(log);
});

test('the owner the config server reports decides: the donor means aborted, with the commit error', () => {
  const error = new MongoError(ErrorCodes.ConflictingOperationInProgress, 'chunk version changed');
  const { state, log } = run([
    ...toCommitting,
    [{ type: 'configCommitReplied', reply: { outcome: 'error', error } }, 'kRecovering', ['sendEnsureChunkVersionIsGreaterThan', 'readConfigChunkOwner']],
    [{ type: 'configChunkOwnerRead', shardId: 's0' }, 'kAborted', ['persistDecision', 'refreshFilteringMetadata', 'exitCriticalSection', 'sendRecvChunkAbort', 'deleteRangeDeletionTask', 'markRecipientRangeDeletionReady', 'deleteCoordinatorDoc']],
  ]);
  assert.equal(state.error, error);
  checkDonorOrdering(log);
});

test('a restarted donor finishes a persisted decision without persisting it again', () => {
  for (const decision of ['committed', 'aborted'] as const) {
    const { state, log } = run([[{ type: 'crashRecovered', doc: { ...doc, decision } }, decision === 'committed' ? 'kCommitted' : 'kAborted',
      decision === 'committed'
        ? ['hintRecipientRefresh', 'refreshFilteringMetadata', 'deleteRecipientRangeDeletionTask', 'markRangeDeletionReady', 'deleteCoordinatorDoc']
        : ['refreshFilteringMetadata', 'sendRecvChunkAbort', 'deleteRangeDeletionTask', 'markRecipientRangeDeletionReady', 'deleteCoordinatorDoc']]]);
    assert.equal(state.criticalSection, 'none');
    checkDonorOrdering(log, { decision });
  }
});

test('a restarted donor without a decision asks the config server, then persists what it learns', () => {
  const { log } = run([
    [{ type: 'crashRecovered', doc }, 'kRecovering', ['sendEnsureChunkVersionIsGreaterThan', 'readConfigChunkOwner']],
    [ev.abort, 'kRecovering', []],
    [{ type: 'configChunkOwnerRead', shardId: null }, 'kAborted', ['persistDecision', 'refreshFilteringMetadata', 'sendRecvChunkAbort', 'deleteRangeDeletionTask', 'markRecipientRangeDeletionReady', 'deleteCoordinatorDoc']],
  ]);
  checkDonorOrdering(log, { decision: undefined });
});

test('starting with a decided document is a bug', () => {
  assert.throws(() => donorStep(donorInitialState(), { ...ev.start, doc: { ...doc, decision: 'committed' } } as DonorEvent), (e: unknown) => e instanceof MongoError && e.code === ErrorCodes.InternalError);
});
