import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FailPoints, hangIfFailPointEnabled, waitForTimesEntered } from '../base/fail_points.js';
import type { DonorEffect } from './donor_effects.js';
import { donorInitialState, donorStep, type DonorEvent, type DonorState } from './donor_state_machine.js';
import { withDonorFailPoints } from './migration_fail_points.js';
import { coordinatorDoc } from './migration_test_util.js';
import { systemClock } from '../base/clock.js';

const doc = coordinatorDoc();
const counts = { cloned: 10, clonedBytes: 1000, catchup: 0, steady: 0 };

test('the donor pauses at its seven steps in order, between the right effects', () => {
  const events: DonorEvent[] = [
    { type: 'start', doc, waitForDelete: false },
    { type: 'recipientAcknowledgedStart' },
    { type: 'recipientStatus', status: { state: 'steady', counts }, transferModsPending: 0 },
    { type: 'criticalSectionEntered' },
    { type: 'recipientCommitted' },
    { type: 'criticalSectionEntered' },
    { type: 'configCommitReplied', reply: { outcome: 'ok' } },
  ];
  let state: DonorState = donorInitialState();
  const queue: string[] = [];
  for (const event of events) {
    const step = donorStep(state, event);
    queue.push(...withDonorFailPoints(state, event, step.state, step.effects).map((e) => (e.type === 'hang' ? e.failPoint : e.type)));
    state = step.state;
  }
  const at = (name: string): number => queue.indexOf(name);
  const steps = [1, 2, 3, 4, 5, 6, 7].map((n) => at(`moveChunkHangAtStep${n}`));
  assert.ok(steps.every((i, n) => i >= 0 && (n === 0 || i > steps[n - 1]!)), queue.join(', '));
  assert.ok(at('moveChunkHangAtStep1') < at('persistCoordinatorDoc'), 'step 1: nothing on disk yet');
  assert.ok(at('hangBeforeEnteringCriticalSection') < at('enterCriticalSection'));
  assert.ok(at('moveChunkHangAtStep5') < at('sendCommitToConfig'), 'step 5: before the config commit');
  assert.ok(at('moveChunkHangAtStep6') < at('persistDecision'), 'step 6: committed, decision not persisted');
  assert.equal(queue.at(-1), 'moveChunkHangAtStep7');
});

test('a recovered donor does not pass the steps of a moveChunk', () => {
  const event: DonorEvent = { type: 'crashRecovered', doc };
  const step = donorStep(donorInitialState(), event);
  const list: (DonorEffect | { type: 'hang' })[] = withDonorFailPoints(donorInitialState(), event, step.state, step.effects);
  assert.ok(list.every((e) => e.type !== 'hang'));
});

test('hangIfFailPointEnabled waits until the fail point is turned off, counting one entry', async () => {
  const failPoints = new FailPoints();
  await hangIfFailPointEnabled({ failPoints }, 'fp', systemClock);
  assert.equal(failPoints.timesEntered('fp'), 0, 'an unset fail point does not pause');
  failPoints.configure('fp', 'alwaysOn');
  let resumed = false;
  const paused = hangIfFailPointEnabled({ failPoints }, 'fp', systemClock).then(() => { resumed = true; });
  assert.equal(await waitForTimesEntered(failPoints, 'fp', 1, Date.now() + 1000, systemClock), true);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(resumed, false);
  failPoints.configure('fp', 'off');
  await paused;
  assert.equal(failPoints.timesEntered('fp'), 1);
  assert.equal(await waitForTimesEntered(failPoints, 'fp', 2, Date.now() + 30, systemClock), false, 'waitForFailPoint gives up at its deadline');
});
