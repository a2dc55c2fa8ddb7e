import type { Timestamp } from 'bson';
import type { Clock } from '../../base/clock.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { ChangeStreamSource } from '../../change_streams/change_stream_source.js';
import { promiseTime } from '../../change_streams/commit_horizon.js';
import { checkFollowingStages, mentionsChangeStream, parseChangeStreamCommand } from '../../change_streams/change_stream_spec.js';
import { cursorReply } from '../../command_layer/cursor_manager.js';
import { optionalDoc, optionalNonNegative } from '../../command_layer/args.js';
import { letVariables } from '../../command_layer/let_variables.js';
import { withReadView } from '../../command_layer/read_view.js';
import { OPLOG_NS } from '../../oplog/oplog_entry.js';
import { runPipeline, validatePipeline } from '../../query/agg/pipeline.js';
import type { ReplicationCoordinator } from '../../replication/replication_coordinator.js';
import { bsonTimestamp } from '../../replication/op_time_bson.js';
import type { CommandContext } from '../command.js';

// `aggregate` whose pipeline starts with $changeStream, on a --replSet member: a tailable,
// awaitData cursor over the member's oplog (src/change_streams). A getMore that finds nothing
// waits for the next oplog entry or a move of the commit point, up to its maxTimeMS.
export function runChangeStream(ctx: CommandContext, cmd: Doc, replication: ReplicationCoordinator): Doc {
  // Events are far below 16 MB here: splitting one never happens, so that stage has nothing to do.
  const { coll, spec, following, stages } = parseChangeStreamCommand(cmd, ctx.db);
  // As MongoDB: a stage that does not exist (40324) before one that may not follow (20).
  if (!mentionsChangeStream(stages)) validatePipeline(stages);
  checkFollowingStages(following);
  const cursorOption = optionalDoc(cmd, 'cursor');
  if (cursorOption === undefined) throw new MongoError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument");
  const batchSize = optionalNonNegative(cursorOption, 'batchSize');
  const { storage, cursors, cappedInserts } = ctx.node;
  const variables = letVariables(cmd);
  const transform = (event: Doc): Doc | undefined => {
    if (stages.length === 0) return event;
    // The stages that may follow read no collection.
    const pctx = { db: ctx.db, collection: coll, variables, now: new Date(ctx.node.wallClock.now()), readCollection: () => [] };
    for (const out of runPipeline(stages, [event], pctx)) return out;
    return undefined;
  };
  const member = {
    committed: () => commitPoint(replication),
    promised: (committed: Timestamp, uncommitted: Timestamp | undefined) => promiseTime({
      committed,
      uncommitted,
      speaksForSet: replication.isWritablePrimary() && soleVoter(replication),
      clock: ctx.node.clock.now(),
      oldestUncommitted: storage.timestamps.oldestPending(),
      oldestPrepared: ctx.node.transactions.oldestPrepared(),
    }),
  };
  const source = new ChangeStreamSource({ storage, spec, transform, member });
  const ns = coll === undefined ? `${ctx.db}.$cmd.aggregate` : `${ctx.db}.${coll}`;
  const progress = progressOf(replication);
  // Not through the view of a majority read: the stream reads the oplog as it grows, and keeps
  // no snapshot pinned for as long as it stays open.
  const batch = withReadView(undefined, () => storage.kv.withView(undefined, () => cursors.firstBatch(ns, source, batchSize, false, {
    tail: {
      keepOpen: true,
      awaitData: true,
      restore: () => source.restore(),
      waitForData: (ms, signal) => firstOf(ctx.node.wallClock, ms, signal, (s) => cappedInserts.waitForInsert(OPLOG_NS, ms, s), (s) => progress.wait(s)),
      ended: () => source.isEnded,
      postBatchResumeToken: (last, pending) => ({ ...source.postBatchResumeToken(last, pending) }),
    },
  })));
  return cursorReply(ns, batch, 'firstBatch');
}

// Within what the store holds: a secondary may know of a commit point past entries it has not applied.
function commitPoint(replication: ReplicationCoordinator): Timestamp | undefined {
  const point = replication.readableCommitPoint();
  return point === undefined ? undefined : bsonTimestamp(point.ts);
}

// A set with no other voter elects no other primary, which could commit before this one's clock.
// With other voters the promise stays at the commit point, which their elections cannot undo.
function soleVoter(replication: ReplicationCoordinator): boolean {
  const state = replication.state();
  return state !== null && state.config.members.filter((m) => m.votes > 0).length === 1;
}

// Wakes the waiting getMores at every event the coordinator takes (the commit point may have moved).
class ProgressWaiters {
  private readonly waiting = new Set<() => void>();

  constructor(replication: ReplicationCoordinator) {
    replication.onProgress(() => {
      const wakers = [...this.waiting];
      this.waiting.clear();
      for (const wake of wakers) wake();
    });
  }

  wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        this.waiting.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', wake, { once: true });
      this.waiting.add(wake);
    });
  }
}

const progressWaiters = new WeakMap<ReplicationCoordinator, ProgressWaiters>();

function progressOf(replication: ReplicationCoordinator): ProgressWaiters {
  let waiters = progressWaiters.get(replication);
  if (waiters === undefined) progressWaiters.set(replication, (waiters = new ProgressWaiters(replication)));
  return waiters;
}

// Resolves when the first of `waits` does (or `signal` aborts), and ends the others.
function firstOf(clock: Clock, ms: number, signal: AbortSignal, ...waits: ((s: AbortSignal) => Promise<void>)[]): Promise<void> {
  const local = new AbortController();
  const abort = (): void => local.abort();
  signal.addEventListener('abort', abort, { once: true });
  const timer = clock.setTimer(ms, abort);
  return Promise.race(waits.map((w) => w(local.signal))).finally(() => {
    timer.cancel();
    signal.removeEventListener('abort', abort);
    local.abort();
  });
}
