import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBalancerSettings } from '../catalog_decisions/balancer_settings.js';
import { balancerLoopInitialState, balancerLoopStep, inBalancerRound, isRoundRunning, type BalancerLoopEvent, type BalancerLoopState } from './balancer_loop.js';
import type { RoundOutcome } from './balancer_round.js';

const timings = { idleRoundIntervalMs: 10_000, migrationsThrottlingMs: 1_000, autoMergerIntervalMs: 60_000, minChunkAgeForMergeMs: 5_000 };
const on = parseBalancerSettings(undefined, undefined, undefined);
const off = parseBalancerSettings({ _id: 'balancer', mode: 'off', stopped: true }, undefined, undefined);
const quiet: RoundOutcome = { candidates: 0, migrations: 0, splits: 0, merges: 0, errors: [] };
const busy: RoundOutcome = { candidates: 2, migrations: 1, splits: 0, merges: 0, errors: ['migration of db.c from s0 to s1 failed: boom'] };

function run(events: BalancerLoopEvent[], from = balancerLoopInitialState(timings, 0)): { state: BalancerLoopState; effects: string[] } {
  let state = from;
  const effects: string[] = [];
  for (const e of events) {
    const next = balancerLoopStep(state, e);
    state = next.state;
    effects.push(...next.effects.map((x) => (x.type === 'armTimer' ? `armTimer ${x.ms}` : x.type)));
  }
  return { state, effects };
}

const startRound: BalancerLoopEvent[] = [{ type: 'start' }, { type: 'timerFired' }];

test('a started balancer runs a round at once, and sleeps the idle interval when the balancer is off', () => {
  const { state, effects } = run([...startRound, { type: 'settingsRead', settings: off, nowMs: 5 }]);
  assert.deepEqual(effects, ['armTimer 0', 'readSettings', 'armTimer 10000']);
  assert.equal(state.phase, 'sleeping');
  assert.equal(state.rounds, 0, 'a round that did not balance is not counted nor recorded');
});

test('a round that moved chunks is recorded with its time and first error, then the loop sleeps the throttling interval', () => {
  const balancing = run([...startRound, { type: 'settingsRead', settings: on, nowMs: 100 }]);
  assert.ok(inBalancerRound(balancing.state));
  const ended = balancerLoopStep(balancing.state, { type: 'balanced', outcome: busy, nowMs: 350 });
  assert.deepEqual(ended.effects, [
    { type: 'recordRound', executionTimeMillis: 250, outcome: busy, errmsg: busy.errors[0] },
    { type: 'armTimer', ms: 1_000 },
  ]);
  assert.equal(ended.state.rounds, 1);
  assert.equal(inBalancerRound(ended.state), false);
});

test('the AutoMerger runs after a quiet round once its interval has passed since the last merge (or the start)', () => {
  const early = run([...startRound, { type: 'settingsRead', settings: on, nowMs: 59_999 }, { type: 'balanced', outcome: quiet, nowMs: 59_999 }]);
  assert.deepEqual(early.effects.slice(-2), ['recordRound', 'armTimer 10000']);
  const due = run([...startRound, { type: 'settingsRead', settings: on, nowMs: 60_000 }, { type: 'balanced', outcome: quiet, nowMs: 60_000 }]);
  assert.equal(due.state.phase, 'merging');
  assert.deepEqual(balancerLoopStep(run([...startRound, { type: 'settingsRead', settings: on, nowMs: 60_000 }]).state, { type: 'balanced', outcome: quiet, nowMs: 60_000 }).effects, [
    { type: 'autoMerge', settings: on, movedBeforeMs: 55_000 },
  ]);
  const merged = balancerLoopStep(due.state, { type: 'merged', merges: 2, nowMs: 60_040 });
  assert.deepEqual(merged.effects, [{ type: 'recordRound', executionTimeMillis: 40, outcome: { ...quiet, merges: 2 }, errmsg: undefined }, { type: 'armTimer', ms: 1_000 }]);
  // The interval counts from this merge.
  const again = run([{ type: 'timerFired' }, { type: 'settingsRead', settings: on, nowMs: 100_000 }, { type: 'balanced', outcome: quiet, nowMs: 100_000 }], merged.state);
  assert.equal(again.state.phase, 'sleeping');
  const withoutMerging = parseBalancerSettings(undefined, undefined, { _id: 'automerge', enabled: false });
  assert.equal(run([...startRound, { type: 'settingsRead', settings: withoutMerging, nowMs: 60_000 }, { type: 'balanced', outcome: quiet, nowMs: 60_000 }]).state.phase, 'sleeping');
  assert.equal(run([...startRound, { type: 'settingsRead', settings: on, nowMs: 60_000 }, { type: 'balanced', outcome: { ...quiet, splits: 1 }, nowMs: 60_000 }]).state.phase, 'sleeping');
});

test('a round that fails as a whole is recorded with its error and counts as quiet; unreadable settings only sleep', () => {
  const failed = run([...startRound, { type: 'settingsRead', settings: on, nowMs: 0 }, { type: 'roundFailed', errmsg: 'no shards', nowMs: 7 }]);
  assert.deepEqual(failed.effects.slice(-2), ['recordRound', 'armTimer 10000']);
  const mergeFailed = balancerLoopStep(run([...startRound, { type: 'settingsRead', settings: on, nowMs: 60_000 }, { type: 'balanced', outcome: quiet, nowMs: 60_000 }]).state, { type: 'roundFailed', errmsg: 'x', nowMs: 60_010 });
  assert.deepEqual(mergeFailed.effects, [{ type: 'recordRound', executionTimeMillis: 10, outcome: quiet, errmsg: 'x' }, { type: 'armTimer', ms: 10_000 }]);
  const unreadable = run([...startRound, { type: 'roundFailed', errmsg: 'bad settings', nowMs: 0 }]);
  assert.deepEqual(unreadable.effects, ['armTimer 0', 'readSettings', 'armTimer 10000']);
  assert.equal(unreadable.state.rounds, 0);
});

test('a wake starts the next round now while sleeping, and is ignored during a round or when stopped', () => {
  const sleeping = run([...startRound, { type: 'settingsRead', settings: off, nowMs: 0 }]).state;
  assert.deepEqual(balancerLoopStep(sleeping, { type: 'wake' }).effects, [{ type: 'armTimer', ms: 0 }]);
  const balancing = run([{ type: 'timerFired' }, { type: 'settingsRead', settings: on, nowMs: 0 }], sleeping).state;
  assert.deepEqual(balancerLoopStep(balancing, { type: 'wake' }).effects, []);
  assert.deepEqual(balancerLoopStep(balancerLoopInitialState(timings, 0), { type: 'wake' }).effects, []);
});

test('a stop cancels the sleep; a round running finishes, is recorded, and no round follows', () => {
  const stopped = run([...startRound, { type: 'settingsRead', settings: off, nowMs: 0 }, { type: 'stop' }]);
  assert.equal(stopped.state.phase, 'stopped');
  assert.deepEqual(stopped.effects.slice(-1), ['cancelTimer']);
  assert.deepEqual(run([{ type: 'timerFired' }, { type: 'wake' }], stopped.state).effects, []);

  const during = run([...startRound, { type: 'settingsRead', settings: on, nowMs: 0 }, { type: 'stop' }]);
  assert.ok(isRoundRunning(during.state));
  const ended = balancerLoopStep(during.state, { type: 'balanced', outcome: busy, nowMs: 3 });
  assert.deepEqual(ended.effects.map((e) => e.type), ['recordRound']);
  assert.equal(ended.state.phase, 'stopped');
  assert.equal(isRoundRunning(ended.state), false);
});

test('late answers change nothing', () => {
  const sleeping = run([...startRound, { type: 'settingsRead', settings: off, nowMs: 0 }]).state;
  for (const e of [
    { type: 'settingsRead', settings: on, nowMs: 1 }, { type: 'balanced', outcome: busy, nowMs: 1 },
    { type: 'merged', merges: 1, nowMs: 1 }, { type: 'roundFailed', errmsg: 'late', nowMs: 1 },
  ] as BalancerLoopEvent[]) {
    assert.deepEqual(balancerLoopStep(sleeping, e), { state: sleeping, effects: [] });
  }
});

test('outside its active window the balancer sleeps, inside it balances, by the time the event carries', () => {
  const windowed = parseBalancerSettings({ _id: 'balancer', activeWindow: { start: '01:00', stop: '02:00' } }, undefined, undefined);
  const at = (h: number) => new Date(2026, 0, 1, h, 30).getTime();
  assert.equal(run([...startRound, { type: 'settingsRead', settings: windowed, nowMs: at(3) }]).state.phase, 'sleeping');
  assert.equal(run([...startRound, { type: 'settingsRead', settings: windowed, nowMs: at(1) }]).state.phase, 'balancing');
});
