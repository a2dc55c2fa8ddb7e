import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { fetchAll } from '../wire/remote_cursor.js';
import { sessionIdOf, sessionKey } from './session_id.js';
import { coordinatorDocumentFromBSON, type CoordinatorDecision, type CoordinatorDocument } from './transaction_coordinator.js';
import { CoordinatorDriver, TRANSACTION_COORDINATORS_NS, type CoordinatorDescription, type CoordinatorDriverEnv } from './transaction_coordinator_driver.js';
import { coordinatorStep, type CoordinatorEvent, type CoordinatorState, type CoordinatorStepFunction } from './transaction_coordinator_state_machine.js';

// What each coordinator's driver is given, but for the shard-host look-up and the stop flag the
// service answers from these.
export interface TransactionCoordinatorEnv extends Omit<CoordinatorDriverEnv, 'hostOf' | 'stopped' | 'step'> {
  configHost(): string | undefined;
}

// MongoDB's TransactionCoordinatorService: runs the coordinators of the transactions this shard
// coordinates (transaction_coordinator.ts), one per {lsid, txnNumber}; a second request for the
// same transaction (the router's retry of its commit) joins the one running.
export class TransactionCoordinatorService {
  // Each transaction's driver, and its run's outcome.
  private readonly running = new Map<string, { driver: CoordinatorDriver; run: Promise<CoordinatorDecision> }>();
  private hosts = new Map<string, string>();
  private stopped = false;
  // Raised by every stop: a driver of an older generation counts as stopped after a later start.
  private generation = 0;
  // Hooks a simulator sets (CockroachDB's testing knobs); a process sets none.
  readonly testingKnobs: { step?: CoordinatorStepFunction } = {};

  constructor(private readonly env: TransactionCoordinatorEnv) {}

  // A driver started in this generation: stopped by the next stop, whatever starts after it.
  private driverEnv(generation: number): CoordinatorDriverEnv {
    const { env } = this;
    const { storage, local, client, logger, clock } = env;
    return {
      storage, local, client, logger, clock,
      get failPoints() { return env.failPoints; },
      get replicationWaits() { return env.replicationWaits; },
      hostOf: (shardId: string) => this.hostOf(shardId),
      stopped: () => this.stopped || generation !== this.generation,
      step: (state: CoordinatorState, event: CoordinatorEvent) => (this.testingKnobs.step ?? coordinatorStep)(state, event),
    };
  }

  // At startup, before the node serves, or at a replica set member's step-up: every coordinator a
  // crash or a step-down interrupted goes on, so that a router's retry joins it rather than
  // starting another; after a step-down, once the drivers it stopped have ended.
  recover(): number {
    this.stopped = false;
    const docs = this.env.local.find(TRANSACTION_COORDINATORS_NS).map(coordinatorDocumentFromBSON);
    const previous = [...this.running.values()].map(({ run }) => run.then(() => undefined, () => undefined));
    const generation = this.generation;
    const resume = (): void => {
      if (generation !== this.generation) return;
      for (const raw of this.env.local.find(TRANSACTION_COORDINATORS_NS)) {
        const doc = coordinatorDocumentFromBSON(raw);
        void this.start(doc, { type: 'crashRecovered', doc }).catch(() => undefined);
      }
    };
    if (previous.length === 0) resume();
    else void Promise.all(previous).then(resume);
    return docs.length;
  }

  // The decision for the transaction, coordinated now or by the coordinator already running.
  coordinateCommit(lsid: Doc, txnNumber: number, participants: string[]): Promise<CoordinatorDecision> {
    const doc = { lsid, txnNumber, participants };
    return this.running.get(keyOf(lsid, txnNumber))?.run ?? this.start(doc, { type: 'start', doc });
  }

  // The coordinators running, for currentOp.
  currentOps(): CoordinatorDescription[] {
    return [...this.running.values()].map(({ driver }) => driver.describe());
  }

  // The coordinator running for the transaction, if any.
  joined(lsid: Doc, txnNumber: number): Promise<CoordinatorDecision> | undefined {
    return this.running.get(keyOf(lsid, txnNumber))?.run;
  }

  // Shutdown or step-down: the drivers end at their next step and keep their documents.
  stop(): void {
    this.stopped = true;
    this.generation += 1;
  }

  private start(doc: CoordinatorDocument, first: CoordinatorEvent): Promise<CoordinatorDecision> {
    const key = keyOf(doc.lsid, doc.txnNumber);
    const driver = new CoordinatorDriver(this.driverEnv(this.generation), doc);
    const run: Promise<CoordinatorDecision> = driver.run(first).finally(() => {
      if (this.running.get(key)?.run === run) this.running.delete(key);
    });
    this.running.set(key, { driver, run });
    return run;
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
}

function keyOf(lsid: Doc, txnNumber: number): string {
  return `${sessionKey(sessionIdOf(lsid))}:${txnNumber}`;
}
