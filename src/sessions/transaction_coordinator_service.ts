import { Long } from 'bson';
import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { hangIfFailPointEnabled, type FailPoints } from '../base/fail_points.js';
import type { Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { Network } from '../wire/network.js';
import { fetchAll } from '../wire/remote_cursor.js';
import { sessionIdOf, sessionKey } from './session_id.js';
import {
  coordinatorDocumentFromBSON, coordinatorDocumentToBSON, nextCoordinatorStep,
  type CoordinatorDecision, type CoordinatorDocument, type CoordinatorProgress, type CoordinatorStep, type PrepareVote,
} from './transaction_coordinator.js';
import type { Clock } from '../base/clock.js';

export const TRANSACTION_COORDINATORS_NS = 'config.transaction_coordinators';

// The fail point a test pauses a coordinator at, before each step (the crash matrix kills the shard
// there): MongoDB's names where it has one.
export const COORDINATOR_FAIL_POINTS: Record<Exclude<CoordinatorStep['type'], 'done'>, string> = {
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

export interface TransactionCoordinatorEnv {
  readonly storage: StorageEngine;
  readonly local: LocalCollections;
  readonly client: Network;
  readonly failPoints: FailPoints;
  readonly logger: Logger;
  readonly clock: Clock;
  configHost(): string | undefined;
}

// MongoDB's TransactionCoordinatorService: runs the coordinators of the transactions this shard
// coordinates (transaction_coordinator.ts), one per {lsid, txnNumber}; a second request for the
// same transaction (the router's retry of its commit) joins the one running.
export class TransactionCoordinatorService {
  private readonly running = new Map<string, Promise<CoordinatorDecision>>();
  private hosts = new Map<string, string>();
  private stopped = false;

  constructor(private readonly env: TransactionCoordinatorEnv) {}

  // At startup, before the node serves: every coordinator a crash interrupted goes on, so that a
  // router's retry joins it rather than starting another.
  recover(): number {
    const docs = this.env.local.find(TRANSACTION_COORDINATORS_NS).map(coordinatorDocumentFromBSON);
    for (const doc of docs) void this.start(doc, { persisted: doc, votes: undefined, delivered: false, recovered: true, deleted: false }).catch(() => undefined);
    return docs.length;
  }

  // The decision for the transaction, coordinated now or by the coordinator already running.
  coordinateCommit(lsid: Doc, txnNumber: number, participants: string[]): Promise<CoordinatorDecision> {
    return this.running.get(keyOf(lsid, txnNumber)) ?? this.start({ lsid, txnNumber, participants }, { persisted: undefined, votes: undefined, delivered: false, recovered: false, deleted: false });
  }

  // The coordinator running for the transaction, if any.
  joined(lsid: Doc, txnNumber: number): Promise<CoordinatorDecision> | undefined {
    return this.running.get(keyOf(lsid, txnNumber));
  }

  stop(): void {
    this.stopped = true;
  }

  private start(doc: CoordinatorDocument, progress: CoordinatorProgress): Promise<CoordinatorDecision> {
    const key = keyOf(doc.lsid, doc.txnNumber);
    const run = this.run(doc, progress).finally(() => this.running.delete(key));
    this.running.set(key, run);
    return run;
  }

  private async run(doc: CoordinatorDocument, progress: CoordinatorProgress): Promise<CoordinatorDecision> {
    const { env } = this;
    const id = { lsid: doc.lsid, txnNumber: doc.txnNumber };
    for (;;) {
      const step = nextCoordinatorStep(progress);
      if (step.type === 'done') return step.decision;
      if (this.stopped) throw new MongoError(ErrorCodes.InterruptedAtShutdown, 'The transaction coordinator was stopped');
      await hangIfFailPointEnabled(env, COORDINATOR_FAIL_POINTS[step.type], env.clock);
      switch (step.type) {
        case 'writeParticipantList':
          await this.persist(() => env.local.write((w) => w.update(TRANSACTION_COORDINATORS_NS, { _id: id }, coordinatorDocumentToBSON(doc), { upsert: true })));
          progress.persisted = { ...doc };
          break;
        case 'sendPrepare':
          progress.votes = await Promise.all(doc.participants.map((shardId) => this.prepare(shardId, doc)));
          break;
        case 'writeDecision': {
          const decided = { ...progress.persisted!, decision: step.decision };
          await this.persist(() => env.local.write((w) => w.update(TRANSACTION_COORDINATORS_NS, { _id: id }, coordinatorDocumentToBSON(decided), { upsert: true })));
          progress.persisted = decided;
          env.logger.info({ c: 'TXN', lsid: doc.lsid, txnNumber: doc.txnNumber, decision: step.decision.decision }, 'Two-phase commit decision persisted');
          break;
        }
        case 'sendDecision':
          await Promise.all(progress.persisted!.participants.map((shardId) => this.deliver(shardId, doc, step.decision)));
          progress.delivered = true;
          break;
        case 'deleteCoordinatorDoc':
          await this.persist(() => env.local.write((w) => w.delete(TRANSACTION_COORDINATORS_NS, { _id: id })));
          progress.deleted = true;
          break;
      }
    }
  }

  private async prepare(shardId: string, doc: CoordinatorDocument): Promise<PrepareVote> {
    const deadline = this.env.clock.now() + PREPARE_RETRY_MS;
    const cmd = { prepareTransaction: 1, lsid: doc.lsid, txnNumber: Long.fromNumber(doc.txnNumber), autocommit: false };
    for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      try {
        const reply = await this.env.client.command(await this.hostOf(shardId), 'admin', cmd);
        if (reply.ok === 1) return { shardId, prepareTimestamp: reply.prepareTimestamp as never };
        return { shardId, code: Number(reply.code), errmsg: String(reply.errmsg) };
      } catch (err) {
        // A shard config.shards does not name (read again just now) cannot prepare: abort at once.
        if (err instanceof MongoError && err.code === ErrorCodes.ShardNotFound) return { shardId, code: err.code, errmsg: err.message };
        if (this.stopped || this.env.clock.now() > deadline) return { shardId, code: ErrorCodes.HostUnreachable, errmsg: String(err) };
        await this.env.clock.sleep(delay, { unref: true });
      }
    }
  }

  // Sent until the participant answers: a participant that prepared waits for it however long.
  private async deliver(shardId: string, doc: CoordinatorDocument, decision: CoordinatorDecision): Promise<void> {
    const session = { lsid: doc.lsid, txnNumber: Long.fromNumber(doc.txnNumber), autocommit: false };
    const cmd = decision.decision === 'commit' ? { commitTransaction: 1, commitTimestamp: decision.commitTimestamp, ...session } : { abortTransaction: 1, ...session };
    for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      if (this.stopped) throw new MongoError(ErrorCodes.InterruptedAtShutdown, 'The transaction coordinator was stopped');
      try {
        const reply = await this.env.client.command(await this.hostOf(shardId), 'admin', cmd);
        // An abort of a transaction the participant no longer has, or never began, is done.
        if (reply.ok !== 1 && decision.decision === 'commit') throw new MongoError(Number(reply.code), String(reply.errmsg));
        return;
      } catch (err) {
        // A shard that is not in the cluster holds nothing to abort.
        if (err instanceof MongoError && err.code === ErrorCodes.ShardNotFound && decision.decision === 'abort') return;
        this.env.logger.warn({ c: 'TXN', shardId, err: String(err) }, 'Retrying to send a two-phase commit decision');
        await this.env.clock.sleep(delay, { unref: true });
      }
    }
  }

  private async hostOf(shardId: string): Promise<string> {
    const known = this.hosts.get(shardId);
    if (known !== undefined) return known;
    const config = this.env.configHost();
    if (config === undefined) throw new MongoError(ErrorCodes.ShardNotFound, 'this shard belongs to no cluster');
    const shards = await fetchAll(this.env.client, config, 'config', { find: 'shards' });
    this.hosts = new Map(shards.map((s) => [String(s._id), String(s.host)]));
    const host = this.hosts.get(shardId);
    if (host === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${shardId} not found`);
    return host;
  }

  private async persist(write: () => unknown): Promise<void> {
    write();
    await this.env.storage.flushed();
  }
}

function keyOf(lsid: Doc, txnNumber: number): string {
  return `${sessionKey(sessionIdOf(lsid))}:${txnNumber}`;
}
