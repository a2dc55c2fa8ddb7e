import type { RangeDeletionTask } from './range_deletion_task.js';

// One range deletion task's run (MongoDB's RangeDeleterService, per task) as a pure state
// machine: `rangeDeletionStep(state, event)` returns the next state and the effects its driver
// (range_deleter_service.ts) runs. The task is read again from disk before each decision, since
// either shard's coordinator may change or delete it meanwhile:
//
//   yielding ─▶ reading ─delayed, not yet processing, not expedited─▶ delaying ─┐
//                  └──────────────────────────────────────────────────────────────┴─▶ readingBeforeQueries
//   readingBeforeQueries ─▶ awaitingQueries ─▶ readingBeforeBatch ─▶ deleting ─full batch─▶ pausing ─▶ readingBeforeQueries
//                                                                       └─short batch─▶ removingTask ─▶ done
//
// A task gone or pending when read ends the run (its migration has not been decided for this
// shard, or the other side resolved it). An expedite ends the delay at once; a stop ends any wait
// and the run with it, and is seen after the routed reads it is waiting for finish.
export type RangeDeletionPhase =
  | 'yielding'
  | 'reading'
  | 'delaying'
  | 'readingBeforeQueries'
  | 'awaitingQueries'
  | 'readingBeforeBatch'
  | 'deleting'
  | 'pausing'
  | 'removingTask'
  | 'done';

export interface RangeDeletionOptions {
  readonly batchSize: number;
  readonly batchDelayMs: number;
  readonly orphanCleanupDelayMs: number;
}

export interface RangeDeletionState {
  readonly phase: RangeDeletionPhase;
  readonly options: RangeDeletionOptions;
  readonly expedited: boolean;
  readonly stopped: boolean;
  // The task as last read, and the documents this run deleted.
  readonly task: RangeDeletionTask | undefined;
  readonly deleted: number;
}

export type RangeDeletionEvent =
  // A pause (the first turn, the delay, or between batches) ended.
  | { readonly type: 'waited' }
  // The task as on disk; undefined when gone or still pending.
  | { readonly type: 'taskRead'; readonly task: RangeDeletionTask | undefined }
  | { readonly type: 'queriesDrained' }
  | { readonly type: 'batchDeleted'; readonly docs: number }
  | { readonly type: 'taskRemoved' }
  | { readonly type: 'expedite' }
  | { readonly type: 'stop' };

export type RangeDeletionEffect =
  // Answered by `waited`; a later `cancelWait` means it is not.
  | { readonly type: 'wait'; readonly ms: number }
  | { readonly type: 'cancelWait' }
  | { readonly type: 'readTask' }
  // Routed reads that started while this shard owned the range: answered by `queriesDrained`.
  | { readonly type: 'awaitQueries'; readonly task: RangeDeletionTask }
  // Up to batchSize documents of the range, and as many off the task's counters, in one write
  // unit (marking it processing): answered by `batchDeleted`.
  | { readonly type: 'deleteBatch'; readonly task: RangeDeletionTask }
  | { readonly type: 'countDeleted'; readonly docs: number; readonly expedited: boolean }
  // The task's document, durably: answered by `taskRemoved`.
  | { readonly type: 'removeTask'; readonly task: RangeDeletionTask }
  | { readonly type: 'logFinished'; readonly task: RangeDeletionTask; readonly deleted: number; readonly expedited: boolean };

export interface RangeDeletionStep {
  readonly state: RangeDeletionState;
  readonly effects: RangeDeletionEffect[];
}

// A run begins by yielding a turn: a task seen inside the write unit that made it ready is read
// once that unit committed.
export function rangeDeletionStart(options: RangeDeletionOptions, expedited: boolean): RangeDeletionStep {
  return { state: { phase: 'yielding', options, expedited, stopped: false, task: undefined, deleted: 0 }, effects: [{ type: 'wait', ms: 0 }] };
}

const WAITING: ReadonlySet<RangeDeletionPhase> = new Set(['yielding', 'delaying', 'pausing']);

export function rangeDeletionStep(state: RangeDeletionState, event: RangeDeletionEvent): RangeDeletionStep {
  if (state.phase === 'done') return to(state, []);
  switch (event.type) {
    case 'expedite':
      if (state.phase === 'delaying') return readAgain({ ...state, expedited: true }, [{ type: 'cancelWait' }]);
      return to({ ...state, expedited: true }, []);
    case 'stop':
      if (WAITING.has(state.phase)) return to({ ...state, stopped: true, phase: 'done' }, [{ type: 'cancelWait' }]);
      return to({ ...state, stopped: true }, []);
    case 'waited':
      if (state.phase === 'yielding') return to({ ...state, phase: 'reading' }, [{ type: 'readTask' }]);
      if (state.phase === 'delaying' || state.phase === 'pausing') return readAgain(state, []);
      return to(state, []);
    case 'taskRead':
      return taskRead(state, event.task);
    case 'queriesDrained':
      return state.phase === 'awaitingQueries' ? to({ ...state, phase: 'readingBeforeBatch' }, [{ type: 'readTask' }]) : to(state, []);
    case 'batchDeleted': {
      if (state.phase !== 'deleting' || state.task === undefined) return to(state, []);
      const next = { ...state, deleted: state.deleted + event.docs };
      const counted: RangeDeletionEffect = { type: 'countDeleted', docs: event.docs, expedited: state.expedited };
      // A short batch means the range is empty.
      if (event.docs < state.options.batchSize) return to({ ...next, phase: 'removingTask' }, [counted, { type: 'removeTask', task: state.task }]);
      return to({ ...next, phase: 'pausing' }, [counted, { type: 'wait', ms: state.options.batchDelayMs }]);
    }
    case 'taskRemoved':
      if (state.phase !== 'removingTask' || state.task === undefined) return to(state, []);
      return to({ ...state, phase: 'done' }, [{ type: 'logFinished', task: state.task, deleted: state.deleted, expedited: state.expedited }]);
  }
}

function taskRead(state: RangeDeletionState, task: RangeDeletionTask | undefined): RangeDeletionStep {
  if (task === undefined || state.stopped) return to({ ...state, phase: 'done' }, []);
  const next = { ...state, task };
  switch (state.phase) {
    // orphanCleanupDelaySecs lets queries that began on the donor before the commit still read
    // the range; a task already processing waited it out before a restart.
    case 'reading':
      if (task.whenToClean === 'delayed' && !task.processing && !state.expedited) return to({ ...next, phase: 'delaying' }, [{ type: 'wait', ms: state.options.orphanCleanupDelayMs }]);
      return readAgain(next, []);
    case 'readingBeforeQueries':
      return to({ ...next, phase: 'awaitingQueries' }, [{ type: 'awaitQueries', task }]);
    case 'readingBeforeBatch':
      return to({ ...next, phase: 'deleting' }, [{ type: 'deleteBatch', task }]);
    default:
      return to(state, []);
  }
}

function readAgain(state: RangeDeletionState, before: RangeDeletionEffect[]): RangeDeletionStep {
  return to({ ...state, phase: 'readingBeforeQueries' }, [...before, { type: 'readTask' }]);
}

function to(state: RangeDeletionState, effects: RangeDeletionEffect[]): RangeDeletionStep {
  return { state, effects };
}
