import { Long } from 'bson';
import type { Logger } from 'pino';
import type { Clock } from '../base/clock.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { hangIfFailPointEnabled, type FailPoints } from '../base/fail_points.js';
import type { Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { Network } from '../wire/network.js';
import { coordinatorDocumentToBSON, decisionAcknowledged, type CoordinatorDecision, type CoordinatorDocument, type PrepareVote } from './transaction_coordinator.js';
import {
  coordinatorInitialState, coordinatorOutcome, type CoordinatorEffect, type CoordinatorEvent, type CoordinatorState, type CoordinatorStepFunction,
} from './transaction_coordinator_state_machine.js';

export const TRANSACTION_COORDINATORS_NS = 'config.transaction_coordinators';

// The fail point a test pauses a coordinator at, before each effect (the crash matrix kills the
// shard there): MongoDB's names where it has one.
const COORDINATOR_FAIL_POINTS: Record<CoordinatorEffect['type'], string> = {
  writeParticipantList: 'hangBeforeWritingParticipantList',
  sendPrepare: 'hangBeforeSendingPrepare',
  writeDecision: 'hangBeforeWritingDecision',
  sendDecision: 'hangBeforeSendingDecision',
  deleteCoordinatorDoc: 'hangBeforeDeletingCoordinatorDoc',
};

// How long a participant that cannot be reached may keep the coordinator from a decision: then it
// counts as a vote to abort. A decision, once made, is sent until every participant has it.
const PREPARE_RETRY_MS = 30_000;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;
// What the coordinator asks of its participants' votes and decisions, as MongoDB's does: a prepare
// or commit a participant's failover took back would split the transaction.
const MAJORITY = { w: 'majority' } as const;

// What a coordinator's driver uses of its shard.
export interface CoordinatorDriverEnv {
  readonly storage: StorageEngine;
  readonly local: LocalCollections;
  readonly client: Network;
  readonly failPoints: FailPoints;
  readonly logger: Logger;
  readonly clock: Clock;
  // A replica-set member's wait for its writes to be majority-committed (none on a standalone).
  readonly replicationWaits?: { awaitMajority(): Promise<void> };
  // The host of a shard (ShardNotFound for one the cluster does not name), and whether the
  // service was stopped.
  hostOf(shardId: string): Promise<string>;
  stopped(): boolean;
  // The state machine's step: coordinatorStep, unless a test planted a bug in it.
  step: CoordinatorStepFunction;
}

// What currentOp shows of a coordinator: where it is, and what it is doing or waiting for.
export interface CoordinatorDescription {
  lsid: Doc;
  txnNumber: number;
  numParticipants: number;
  phase: string;
  // The effect being run (a write, or the majority wait after it) or undefined between effects.
  effect: string | undefined;
  startedMs: number;
}

// Runs one coordinator: steps its state machine (transaction_coordinator_state_machine.ts) and
// runs the effects strictly one after another, each after its fail point; replies come back as
// events. Resolves with the decision once the document is deleted; rejects when stopped, or when
// a write fails (what is on disk is then recovered at the next start).
export class CoordinatorDriver {
  private state: CoordinatorState = coordinatorInitialState();
  private readonly queue: CoordinatorEffect[] = [];
  private draining = false;
  private settled = false;
  private resolve!: (decision: CoordinatorDecision) => void;
  private reject!: (err: unknown) => void;
  private readonly finished = new Promise<CoordinatorDecision>((resolve, reject) => { this.resolve = resolve; this.reject = reject; });

  private running: string | undefined;
  private readonly startedMs: number;

  constructor(private readonly env: CoordinatorDriverEnv, private readonly doc: CoordinatorDocument) {
    this.startedMs = env.clock.now();
  }

  describe(): CoordinatorDescription {
    const { lsid, txnNumber, participants } = this.doc;
    return { lsid, txnNumber, numParticipants: participants.length, phase: this.state.phase, effect: this.running, startedMs: this.startedMs };
  }

  run(first: CoordinatorEvent): Promise<CoordinatorDecision> {
    this.step(first);
    return this.finished;
  }

  private step(event: CoordinatorEvent): void {
    if (this.settled) return;
    const { state, effects } = this.env.step(this.state, event);
    this.state = state;
    this.queue.push(...effects);
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let e = this.queue.shift(); e !== undefined && !this.settled; e = this.queue.shift()) {
        if (this.env.stopped()) throw stoppedError();
        await hangIfFailPointEnabled(this.env, COORDINATOR_FAIL_POINTS[e.type], this.env.clock);
        this.running = e.type;
        await this.execute(e);
        this.running = undefined;
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.draining = false;
    }
    const decision = coordinatorOutcome(this.state);
    if (decision !== undefined && !this.settled) {
      this.settled = true;
      this.resolve(decision);
    }
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.queue.length = 0;
    this.reject(err);
  }

  private async execute(e: CoordinatorEffect): Promise<void> {
    const { env } = this;
    const id = { lsid: this.doc.lsid, txnNumber: this.doc.txnNumber };
    switch (e.type) {
      case 'writeParticipantList':
        await this.persist(() => env.local.write((w) => w.update(TRANSACTION_COORDINATORS_NS, { _id: id }, coordinatorDocumentToBSON(e.doc), { upsert: true })));
        return this.step({ type: 'participantListPersisted' });
      case 'sendPrepare': {
        const deadline = env.clock.now() + PREPARE_RETRY_MS;
        for (const shardId of e.participants) this.prepare(shardId, deadline).then((vote) => this.step({ type: 'voteReceived', vote }), (err: unknown) => this.fail(err));
        return;
      }
      case 'writeDecision':
        await this.persist(() => env.local.write((w) => w.update(TRANSACTION_COORDINATORS_NS, { _id: id }, coordinatorDocumentToBSON(e.doc), { upsert: true })));
        env.logger.info({ c: 'TXN', lsid: this.doc.lsid, txnNumber: this.doc.txnNumber, decision: e.doc.decision?.decision }, 'Two-phase commit decision persisted');
        return this.step({ type: 'decisionPersisted' });
      case 'sendDecision':
        for (const shardId of e.participants) this.deliver(shardId, e.decision).then(() => this.step({ type: 'decisionAcknowledged', shardId }), (err: unknown) => this.fail(err));
        return;
      case 'deleteCoordinatorDoc':
        await this.persist(() => env.local.write((w) => w.delete(TRANSACTION_COORDINATORS_NS, { _id: id })));
        return this.step({ type: 'coordinatorDocDeleted' });
    }
  }

  private async prepare(shardId: string, deadline: number): Promise<PrepareVote> {
    const { env, doc } = this;
    const cmd = { prepareTransaction: 1, lsid: doc.lsid, txnNumber: Long.fromNumber(doc.txnNumber), autocommit: false, writeConcern: MAJORITY };
    for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      try {
        const reply = await env.client.command(await env.hostOf(shardId), 'admin', cmd);
        // A vote whose prepare a majority does not hold yet (a deposed primary's) is asked again.
        if (reply.ok === 1 && reply.writeConcernError !== undefined) throw replyError(reply);
        if (reply.ok === 1) return { shardId, prepareTimestamp: reply.prepareTimestamp as never };
        return { shardId, code: Number(reply.code), errmsg: String(reply.errmsg) };
      } catch (err) {
        // A shard config.shards does not name (read again just now) cannot prepare: abort at once.
        if (err instanceof MongoError && err.code === ErrorCodes.ShardNotFound) return { shardId, code: err.code, errmsg: err.message };
        if (env.stopped() || env.clock.now() > deadline) return { shardId, code: ErrorCodes.HostUnreachable, errmsg: String(err) };
        await this.pause(delay);
      }
    }
  }

  // Sent until the participant answers: a participant that prepared waits for it however long.
  private async deliver(shardId: string, decision: CoordinatorDecision): Promise<void> {
    const { env, doc } = this;
    const session = { lsid: doc.lsid, txnNumber: Long.fromNumber(doc.txnNumber), autocommit: false, writeConcern: MAJORITY };
    const cmd: Doc = decision.decision === 'commit' ? { commitTransaction: 1, commitTimestamp: decision.commitTimestamp, ...session } : { abortTransaction: 1, ...session };
    for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      if (env.stopped()) throw stoppedError();
      try {
        const reply = await env.client.command(await env.hostOf(shardId), 'admin', cmd);
        // Done once acknowledged (decisionAcknowledged); anything else goes again, to the shard's
        // primary of the moment.
        if (!decisionAcknowledged(reply)) throw replyError(reply);
        return;
      } catch (err) {
        // A shard that is not in the cluster holds nothing to abort.
        if (err instanceof MongoError && err.code === ErrorCodes.ShardNotFound && decision.decision === 'abort') return;
        env.logger.warn({ c: 'TXN', shardId, err: String(err) }, 'Retrying to send a two-phase commit decision');
        await this.pause(delay);
      }
    }
  }

  // Durable, and on a replica set majority-committed, as MongoDB writes the coordinator's
  // document: a decision a failover could take back might already have reached a participant. A
  // wait a step-down ends fails the driver; the new primary recovers from what was replicated.
  private async persist(write: () => unknown): Promise<void> {
    write();
    await this.env.storage.flushed();
    await this.env.replicationWaits?.awaitMajority();
  }

  // A pause that alone does not keep the process running.
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => { this.env.clock.setTimer(ms, resolve, { unref: true }); });
  }
}

function stoppedError(): MongoError {
  return new MongoError(ErrorCodes.InterruptedAtShutdown, 'The transaction coordinator was stopped');
}

// What a participant's reply says went wrong: its writeConcernError when it has one (an ok from a
// primary deposed before its write replicated), else its own error.
function replyError(reply: Doc): MongoError {
  const error = (reply.writeConcernError as Doc | undefined) ?? reply;
  return new MongoError(Number(error.code), String(error.errmsg));
}
