import { shouldBalance, type BalancerSettings } from '../catalog_decisions/balancer_settings.js';
import type { RoundOutcome } from './balancer_round.js';

export interface BalancerTimings {
  readonly idleRoundIntervalMs: number;
  readonly migrationsThrottlingMs: number;
  readonly autoMergerIntervalMs: number;
  readonly minChunkAgeForMergeMs: number;
}

// The balancer's loop (MongoDB's Balancer main thread) as a pure state machine:
// `balancerLoopStep(state, event)` returns the next state and the effects its driver
// (balancer.ts) runs, in order. Times are the driver's clock's, in milliseconds.
//
//   stopped ─start─▶ sleeping ─timer─▶ checkingSettings ─off or outside the window─▶ sleeping
//                                        └─on─▶ balancing ─▶ (merging) ─▶ record ─▶ sleeping
//
// After a round that changed the placement it sleeps the throttling interval, after any other
// the idle interval; a wake while sleeping starts the next round now. A stop cancels the sleep;
// a round already running finishes (and is recorded), and none follows.
export type BalancerLoopPhase = 'stopped' | 'sleeping' | 'checkingSettings' | 'balancing' | 'merging';

export interface BalancerLoopState {
  readonly phase: BalancerLoopPhase;
  readonly enabled: boolean;
  readonly timings: BalancerTimings;
  // Rounds that balanced (and were recorded), for balancerStatus.
  readonly rounds: number;
  readonly lastAutoMergeMs: number;
  // The round in progress, from its settings on.
  readonly round: { readonly settings: BalancerSettings; readonly startedMs: number; readonly outcome: RoundOutcome | undefined } | undefined;
}

export type BalancerLoopEvent =
  | { readonly type: 'start' }
  | { readonly type: 'stop' }
  // balancerStart, a zone or draining change: no reason to sleep out the interval.
  | { readonly type: 'wake' }
  | { readonly type: 'timerFired' }
  | { readonly type: 'settingsRead'; readonly settings: BalancerSettings; readonly nowMs: number }
  | { readonly type: 'balanced'; readonly outcome: RoundOutcome; readonly nowMs: number }
  | { readonly type: 'merged'; readonly merges: number; readonly nowMs: number }
  // The settings, the statistics, the policy or the merges failed as a whole (not one migration
  // or merge).
  | { readonly type: 'roundFailed'; readonly errmsg: string; readonly nowMs: number };

export type BalancerLoopEffect =
  | { readonly type: 'armTimer'; readonly ms: number }
  | { readonly type: 'cancelTimer' }
  // Answered by settingsRead.
  | { readonly type: 'readSettings' }
  // The cluster's statistics and the round's splits and migrations: answered by balanced or
  // roundFailed.
  | { readonly type: 'balance'; readonly settings: BalancerSettings }
  // The AutoMerger over chunks not moved since movedBeforeMs: answered by merged or roundFailed.
  | { readonly type: 'autoMerge'; readonly settings: BalancerSettings; readonly movedBeforeMs: number }
  // The round's config.actionlog entry (`balancer.round`).
  | { readonly type: 'recordRound'; readonly executionTimeMillis: number; readonly outcome: RoundOutcome | undefined; readonly errmsg: string | undefined };

export interface BalancerLoopStep {
  readonly state: BalancerLoopState;
  readonly effects: BalancerLoopEffect[];
}

// The AutoMerger first runs one interval after the process starts.
export function balancerLoopInitialState(timings: BalancerTimings, nowMs: number): BalancerLoopState {
  return { phase: 'stopped', enabled: false, timings, rounds: 0, lastAutoMergeMs: nowMs, round: undefined };
}

// Whether a round is balancing (balancerStatus's inBalancerRound).
export function inBalancerRound(state: BalancerLoopState): boolean {
  return state.phase === 'balancing' || state.phase === 'merging';
}

// Whether the loop is between a timer and its next sleep (what balancerStop waits for).
export function isRoundRunning(state: BalancerLoopState): boolean {
  return state.phase === 'checkingSettings' || inBalancerRound(state);
}

export function balancerLoopStep(state: BalancerLoopState, event: BalancerLoopEvent): BalancerLoopStep {
  switch (event.type) {
    case 'start':
      if (isRoundRunning(state)) return to({ ...state, enabled: true }, []);
      return to({ ...state, enabled: true, phase: 'sleeping' }, [{ type: 'armTimer', ms: 0 }]);
    case 'stop':
      return to({ ...state, enabled: false, phase: isRoundRunning(state) ? state.phase : 'stopped' }, [{ type: 'cancelTimer' }]);
    case 'wake':
      return state.enabled && state.phase === 'sleeping' ? to(state, [{ type: 'armTimer', ms: 0 }]) : to(state, []);
    case 'timerFired':
      return state.phase === 'sleeping' ? to({ ...state, phase: 'checkingSettings' }, [{ type: 'readSettings' }]) : to(state, []);
    case 'settingsRead':
      if (state.phase !== 'checkingSettings') return to(state, []);
      if (!shouldBalance(event.settings, new Date(event.nowMs))) return sleep(state, false);
      return to({ ...state, phase: 'balancing', round: { settings: event.settings, startedMs: event.nowMs, outcome: undefined } }, [{ type: 'balance', settings: event.settings }]);
    case 'balanced': {
      const { round } = state;
      if (state.phase !== 'balancing' || round === undefined) return to(state, []);
      const { outcome, nowMs } = event;
      const { autoMergerIntervalMs, minChunkAgeForMergeMs } = state.timings;
      // Merging waits for a round that found nothing to move or split.
      if (outcome.migrations === 0 && outcome.splits === 0 && round.settings.autoMerge && nowMs - state.lastAutoMergeMs >= autoMergerIntervalMs) {
        return to({ ...state, phase: 'merging', lastAutoMergeMs: nowMs, round: { ...round, outcome } }, [
          { type: 'autoMerge', settings: round.settings, movedBeforeMs: nowMs - minChunkAgeForMergeMs },
        ]);
      }
      return finish(state, { ...round, outcome }, outcome.errors[0], nowMs, true);
    }
    case 'merged': {
      const { round } = state;
      if (state.phase !== 'merging' || round?.outcome === undefined) return to(state, []);
      const outcome = { ...round.outcome, merges: event.merges };
      return finish(state, { ...round, outcome }, outcome.errors[0], event.nowMs, true);
    }
    case 'roundFailed':
      // Settings that cannot be read make a quiet round, not a recorded one.
      if (state.phase === 'checkingSettings') return sleep(state, false);
      if (!inBalancerRound(state) || state.round === undefined) return to(state, []);
      return finish(state, state.round, event.errmsg, event.nowMs, false);
  }
}

// The round is recorded with what it got done; one that failed as a whole counts as quiet.
function finish(state: BalancerLoopState, round: NonNullable<BalancerLoopState['round']>, errmsg: string | undefined, nowMs: number, completed: boolean): BalancerLoopStep {
  const { outcome } = round;
  const record: BalancerLoopEffect = { type: 'recordRound', executionTimeMillis: nowMs - round.startedMs, outcome, errmsg };
  const moved = completed && outcome !== undefined && outcome.migrations + outcome.splits + outcome.merges > 0;
  const next = sleep({ ...state, rounds: state.rounds + 1, round: undefined }, moved);
  return to(next.state, [record, ...next.effects]);
}

function sleep(state: BalancerLoopState, moved: boolean): BalancerLoopStep {
  if (!state.enabled) return to({ ...state, phase: 'stopped', round: undefined }, []);
  const ms = moved ? state.timings.migrationsThrottlingMs : state.timings.idleRoundIntervalMs;
  return to({ ...state, phase: 'sleeping', round: undefined }, [{ type: 'armTimer', ms }]);
}

function to(state: BalancerLoopState, effects: BalancerLoopEffect[]): BalancerLoopStep {
  return { state, effects };
}
