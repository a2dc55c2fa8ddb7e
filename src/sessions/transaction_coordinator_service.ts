import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { fetchAll } from '../wire/remote_cursor.js';
import { sessionIdOf, sessionKey } from './session_id.js';
import { coordinatorDocumentFromBSON, type CoordinatorDecision, type CoordinatorDocument } from './transaction_coordinator.js';
import { CoordinatorDriver, TRANSACTION_COORDINATORS_NS, type CoordinatorDriverEnv } from './transaction_coordinator_driver.js';
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
  private readonly running = new Map<string, Promise<CoordinatorDecision>>();
  private hosts = new Map<string, string>();
  private stopped = false;
  private readonly driverEnv: CoordinatorDriverEnv;
  // Hooks a simulator sets (CockroachDB's testing knobs); a process sets none.
  readonly testingKnobs: { step?: CoordinatorStepFunction } = {};

  constructor(private readonly env: TransactionCoordinatorEnv) {
    const { storage, local, client, logger, clock } = env;
    this.driverEnv = {
      storage, local, client, logger, clock,
      get failPoints() { return env.failPoints; },
      hostOf: (shardId: string) => this.hostOf(shardId),
      stopped: () => this.stopped,
      step: (state: CoordinatorState, event: CoordinatorEvent) => (this.testingKnobs.step ?? coordinatorStep)(state, event),
    };
  }

  // At startup, before the node serves: every coordinator a crash interrupted goes on, so that a
  // router's retry joins it rather than starting another.
  recover(): number {
    const docs = this.env.local.find(TRANSACTION_COORDINATORS_NS).map(coordinatorDocumentFromBSON);
    for (const doc of docs) void this.start(doc, { type: 'crashRecovered', doc }).catch(() => undefined);
    return docs.length;
  }

  // The decision for the transaction, coordinated now or by the coordinator already running.
  coordinateCommit(lsid: Doc, txnNumber: number, participants: string[]): Promise<CoordinatorDecision> {
    const doc = { lsid, txnNumber, participants };
    return this.running.get(keyOf(lsid, txnNumber)) ?? this.start(doc, { type: 'start', doc });
  }

  // The coordinator running for the transaction, if any.
  joined(lsid: Doc, txnNumber: number): Promise<CoordinatorDecision> | undefined {
    return this.running.get(keyOf(lsid, txnNumber));
  }

  stop(): void {
    this.stopped = true;
  }

  private start(doc: CoordinatorDocument, first: CoordinatorEvent): Promise<CoordinatorDecision> {
    const key = keyOf(doc.lsid, doc.txnNumber);
    const run = new CoordinatorDriver(this.driverEnv, doc).run(first).finally(() => this.running.delete(key));
    this.running.set(key, run);
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
