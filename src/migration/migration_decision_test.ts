import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decisionEffects, decisionFromConfigOwner, resolveMigration } from './migration_decision.js';
import { coordinatorDoc } from './migration_test_util.js';

const doc = coordinatorDoc();

test('the config server\'s owner decides: the donor or no chunk at all means aborted, anyone else committed', () => {
  assert.equal(decisionFromConfigOwner(doc, 's0'), 'aborted');
  assert.equal(decisionFromConfigOwner(doc, null), 'aborted');
  assert.equal(decisionFromConfigOwner(doc, 's1'), 'committed');
  // The recipient may already have moved the range on to a third shard.
  assert.equal(decisionFromConfigOwner(doc, 's2'), 'committed');
});

test('a commit deletes the recipient\'s task and frees the donor\'s range; an abort the reverse', () => {
  const opts = { persist: false, refresh: false, criticalSectionHeld: false, waitForDelete: false };
  assert.deepEqual(decisionEffects(doc, 'committed', opts).map((e) => e.type), ['deleteRecipientRangeDeletionTask', 'markRangeDeletionReady', 'deleteCoordinatorDoc']);
  assert.deepEqual(decisionEffects(doc, 'aborted', opts).map((e) => e.type), ['sendRecvChunkAbort', 'deleteRangeDeletionTask', 'markRecipientRangeDeletionReady', 'deleteCoordinatorDoc']);
});

test('an undecided document is fenced and read before it is decided, then the decision is persisted first', () => {
  const asking = resolveMigration(doc);
  assert.equal(asking.decision, undefined);
  assert.deepEqual(asking.effects.map((e) => e.type), ['sendEnsureChunkVersionIsGreaterThan', 'readConfigChunkOwner']);
  const decided = resolveMigration(doc, 's1');
  assert.equal(decided.decision, 'committed');
  assert.deepEqual(decided.effects.slice(0, 3).map((e) => e.type), ['persistDecision', 'hintRecipientRefresh', 'refreshFilteringMetadata']);
  const aborted = resolveMigration(doc, 's0');
  assert.deepEqual(aborted.effects.slice(0, 2).map((e) => e.type), ['persistDecision', 'refreshFilteringMetadata']);
});

test('a decided document is finished with its own decision, whatever the config server says', () => {
  const decided = resolveMigration({ ...doc, decision: 'aborted' }, 's1');
  assert.equal(decided.decision, 'aborted');
  assert.equal(decided.effects.some((e) => e.type === 'persistDecision'), false);
});
