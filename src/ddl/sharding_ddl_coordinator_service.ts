import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Clock } from '../base/clock.js';
import type { FailPoints } from '../base/fail_points.js';
import { valuesEqual } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { DDLLockManager, DDLLockRequest } from './ddl_lock_manager.js';
import {
  DDL_COORDINATORS_NS, newCoordinatorDocument, nextSession, type CoordinatorDocument, type CoordinatorId, type DDLOperationType,
} from './sharding_ddl_coordinator_document.js';
import { withCoordinatorSession } from './sharding_ddl_util.js';
import { retryDelayMs, type CoordinatorEvent, type PhaseError, type PhasePlan } from './sharding_ddl_coordinator_state_machine.js';
import { ddlRunStart, ddlRunStep, type DDLRunEvent } from './sharding_ddl_coordinator_run.js';

// One DDL operation's own part: its phases, its locks, what each phase does (idempotent: a phase
// runs again after a crash) and its answer.
export interface DDLCoordinator {
  // MongoDB's name for it in $currentOp (`desc`).
  readonly desc: string;
  readonly plan: PhasePlan;
  readonly locks: DDLLockRequest;
  // `save` persists fields of the state document at once, for the phases after this one.
  runPhase(phase: string, doc: CoordinatorDocument, save: (fields: Doc) => void): Promise<void>;
  result(doc: CoordinatorDocument): Doc;
  // Undoes what the phases after the precondition did when one up to the plan's lastAbortablePhase
  // ends the operation with an error; the state document stays until it succeeds.
  cleanupOnAbort?(doc: CoordinatorDocument): Promise<void>;
}

export type CoordinatorFactory = (doc: CoordinatorDocument) => DDLCoordinator;

export interface CoordinatorRequest {
  readonly id: CoordinatorId;
  readonly request: Doc;
  readonly databaseVersion?: Doc;
}

// For the crash matrix (--enableTestCommands): {desc?, phase?} picks the coordinator and phase it
// pauses before, once the phase is persisted and before its work starts.
export const HANG_BEFORE_PHASE_FAIL_POINT = 'hangBeforeDDLCoordinatorPhase';
const HANG_POLL_MS = 10;

// Operations a second request joins whatever its arguments (MongoDB: drop always joins).
const ALWAYS_JOIN: ReadonlySet<DDLOperationType> = new Set(['dropCollection', 'dropDatabase']);

interface Running {
  doc: CoordinatorDocument;
  // The service's generation it was launched in: a stop ends it, and a later start's coordinators are not it.
  readonly generation: number;
  readonly coordinator: DDLCoordinator;
  readonly result: Promise<Doc>;
}

// MongoDB's ShardingDDLCoordinatorService, on a database's primary shard: runs each coordinator
// through the phase machine, persisting its state document in config.system.sharding_ddl_coordinators
// before each phase, holding its DDL locks from before the first phase to after the last. A
// request identical to a running coordinator's joins it; a different one for the same namespace and
// operation is refused. At startup every persisted coordinator is taken up again and takes its
// locks before any new request may.
export class ShardingDDLCoordinatorService {
  private readonly running = new Map<string, Running>();
  // Resolves once every recovered coordinator holds its locks.
  private recovered: Promise<void> = Promise.resolve();
  private stopping = false;
  // Raised by every stop; a coordinator of an older one writes nothing more.
  private generation = 0;
  private interruption: MongoError = interruptedBy('shutdown');

  constructor(
    private readonly local: LocalCollections,
    private readonly locks: DDLLockManager,
    private readonly failPoints: FailPoints,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly factories: Readonly<Record<DDLOperationType, CoordinatorFactory>>,
    // Once the locks are held: this shard is still the database's primary at the version the
    // router attached (StaleDbVersion otherwise). The dispatcher checked it before the request
    // waited for the locks, and what held them (a dropDatabase, a movePrimary) may have changed it.
    private readonly checkDatabaseVersion: (db: string, version: Doc) => Promise<void>,
    // After a recovery, under the coordinator's new session: every participant and the config
    // server learn its txnNumber, and refuse the older one's commands still in flight.
    private readonly fenceParticipants: () => Promise<void>,
  ) {}

  // Startup, before the node listens, or a replica set member's step-up: each persisted coordinator
  // runs again from its phase, once the coordinators of the term before it ended.
  recover(): void {
    this.stopping = false;
    const generation = this.generation;
    const previous = [...this.running.values()].map((r) => r.result.then(() => undefined, () => undefined));
    if (previous.length === 0) {
      this.recovered = this.relaunch();
      return;
    }
    this.recovered = Promise.all(previous).then(() => (generation === this.generation ? this.relaunch() : undefined)).catch((err: unknown) => {
      this.logger.warn({ c: 'SHARDING', err }, 'DDL coordinators not recovered');
    });
  }

  private relaunch(): Promise<void> {
    const acquired: Promise<void>[] = [];
    for (const raw of this.local.find(DDL_COORDINATORS_NS)) {
      const stored = raw as unknown as CoordinatorDocument;
      const doc = { ...stored, session: nextSession(stored) };
      this.local.write((w) => w.update(DDL_COORDINATORS_NS, { _id: doc._id }, { $set: { session: doc.session } }));
      this.logger.info({ c: 'SHARDING', coordinator: doc._id, phase: doc.phase }, 'Recovering DDL coordinator');
      let lockTaken!: () => void;
      acquired.push(new Promise((r) => { lockTaken = r; }));
      this.launch(doc, { type: 'recovered' }, lockTaken).catch((err: unknown) => {
        this.logger.warn({ c: 'SHARDING', coordinator: doc._id, err }, 'Recovered DDL coordinator stopped');
      });
    }
    return Promise.all(acquired).then(() => undefined);
  }

  // Runs the request's coordinator, or joins the one running for it, and answers its result.
  async run(req: CoordinatorRequest): Promise<Doc> {
    await this.recovered;
    const existing = this.running.get(key(req.id));
    if (existing !== undefined) {
      if (ALWAYS_JOIN.has(req.id.operationType) || valuesEqual(existing.doc.request, req.request)) return existing.result;
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress,
        `Another ${req.id.operationType} with different arguments is already running for the same namespace ${req.id.namespace}`);
    }
    return this.launch(newCoordinatorDocument(req.id, req.request, req.databaseVersion), { type: 'start' }, () => undefined);
  }

  // $currentOp: one entry per coordinator in flight, as MongoDB's reportForCurrentOp gives it.
  currentOps(): Doc[] {
    return [...this.running.values()].map(({ doc, coordinator }) => ({
      type: 'op', desc: coordinator.desc, op: 'command', ns: doc._id.namespace, command: doc.request, currentPhase: doc.phase, active: true,
    }));
  }

  // Shutdown or step-down: coordinators stop between steps, write nothing more and keep their
  // documents for the next start (here or on the next primary).
  stop(cause: 'shutdown' | 'stepDown' = 'shutdown'): void {
    this.stopping = true;
    this.generation += 1;
    this.interruption = interruptedBy(cause);
  }

  private launch(doc: CoordinatorDocument, first: CoordinatorEvent, lockTaken: () => void): Promise<Doc> {
    const coordinator = this.factories[doc._id.operationType](doc);
    const k = key(doc._id);
    const entry: Running = { doc, coordinator, generation: this.generation, result: this.execute(k, coordinator, first, lockTaken) };
    this.running.set(k, entry);
    const done = (): void => { if (this.running.get(k) === entry) this.running.delete(k); };
    entry.result.then(done, done);
    return entry.result;
  }

  // The driver of ddlRunStep: runs each step's effects in order, the answer of the one that has one
  // being the next event.
  private async execute(k: string, coordinator: DDLCoordinator, first: CoordinatorEvent, lockTaken: () => void): Promise<Doc> {
    await Promise.resolve(); // `running` holds the entry before anything below reads it
    const { doc } = this.entry(k);
    let { state, effects } = ddlRunStart(coordinator.plan, { recovered: first.type === 'recovered', persistedPhase: doc.phase, checkDatabaseVersion: doc.databaseVersion !== undefined });
    let release: (() => void) | undefined;
    try {
      for (;;) {
        let event: DDLRunEvent | undefined;
        for (const e of effects) {
          switch (e.type) {
            case 'acquireLocks':
              release = await this.locks.acquire(coordinator.locks, this.entry(k).doc._id.operationType).finally(lockTaken);
              event = { type: 'locksAcquired' };
              break;
            case 'checkDatabaseVersion': {
              const { databaseVersion, _id } = this.entry(k).doc;
              await this.checkDatabaseVersion(_id.namespace.split('.')[0]!, databaseVersion!);
              event = { type: 'databaseVersionChecked' };
              break;
            }
            case 'fenceParticipants':
              await this.retried(k, 'fencing its participants', () => withCoordinatorSession(this.entry(k).doc.session, this.fenceParticipants));
              event = { type: 'participantsFenced' };
              break;
            case 'checkpoint':
              this.checkpoint(k, e.phase, e.insert);
              break;
            case 'wait':
              await this.clock.sleep(e.ms);
              break;
            case 'runPhase':
              this.checkStopping(k);
              await this.hangBeforePhase(k, coordinator.desc, e.phase);
              event = await this.runPhase(k, coordinator, e.phase);
              break;
            case 'cleanUp':
              await this.cleanUpOnAbort(k, coordinator);
              event = { type: 'cleanedUp' };
              break;
            case 'deleteDocument':
              this.checkStopping(k);
              this.local.write((w) => w.delete(DDL_COORDINATORS_NS, { _id: this.entry(k).doc._id }));
              break;
            case 'answerResult':
              return coordinator.result(this.entry(k).doc);
            case 'answerError':
              throw new MongoError(e.error.code ?? ErrorCodes.InternalError, e.error.message);
          }
        }
        if (event === undefined) throw new MongoError(ErrorCodes.InternalError, `DDL coordinator ${k} has nothing to wait for in ${state.stage}`);
        ({ state, effects } = ddlRunStep(state, event));
      }
    } finally {
      release?.();
    }
  }

  private async runPhase(k: string, coordinator: DDLCoordinator, phase: string): Promise<DDLRunEvent> {
    const save = (fields: Doc): void => {
      this.checkStopping(k);
      const entry = this.entry(k);
      this.local.write((w) => w.update(DDL_COORDINATORS_NS, { _id: entry.doc._id }, { $set: fields }));
      entry.doc = { ...entry.doc, ...fields };
    };
    try {
      const { doc } = this.entry(k);
      await withCoordinatorSession(doc.session, () => coordinator.runPhase(phase, doc, save));
      return { type: 'phaseDone' };
    } catch (err) {
      this.checkStopping(k);
      const error: PhaseError = err instanceof MongoError ? { code: err.code, message: err.message } : { code: undefined, message: String((err as Error)?.message ?? err) };
      this.logger.warn({ c: 'SHARDING', coordinator: this.entry(k).doc._id, phase, err: error }, 'DDL coordinator phase failed');
      return { type: 'phaseFailed', error };
    }
  }

  // The operation answers its error only once undone.
  private async cleanUpOnAbort(k: string, coordinator: DDLCoordinator): Promise<void> {
    const { cleanupOnAbort } = coordinator;
    if (cleanupOnAbort === undefined) return;
    const { doc } = this.entry(k);
    await this.retried(k, 'cleaning up after its abort', () => withCoordinatorSession(doc.session, () => cleanupOnAbort(doc)));
  }

  // Work outside the phases that must succeed before the coordinator goes on: retried as a phase is.
  private async retried(k: string, what: string, fn: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        this.checkStopping(k);
        this.logger.warn({ c: 'SHARDING', coordinator: this.entry(k).doc._id, err }, `DDL coordinator failed ${what}`);
        await this.clock.sleep(retryDelayMs(attempt));
      }
    }
  }

  // The first checkpoint inserts the document: before it, the operation has changed nothing. Each
  // later one moves the session to its next txnNumber with the phase (MongoDB's _updateSession), so
  // that a participant that ran a command of this phase refuses one of an earlier phase still on
  // its way (a critical section taken after the phase that released it, say).
  private checkpoint(k: string, phase: string, first: boolean): void {
    this.checkStopping(k);
    const entry = this.entry(k);
    const doc = { ...entry.doc, phase, session: first ? entry.doc.session : nextSession(entry.doc) };
    this.local.write((w) => {
      if (first) w.insert(DDL_COORDINATORS_NS, doc as unknown as Doc);
      else w.update(DDL_COORDINATORS_NS, { _id: doc._id }, { $set: { phase, session: doc.session } });
    });
    entry.doc = doc;
  }

  private async hangBeforePhase(k: string, desc: string, phase: string): Promise<void> {
    const applies = (d: Readonly<Record<string, unknown>>): boolean => (d.desc === undefined || d.desc === desc) && (d.phase === undefined || d.phase === phase);
    if (this.failPoints.shouldFire(HANG_BEFORE_PHASE_FAIL_POINT, applies) === undefined) return;
    while (this.failPoints.isEnabled(HANG_BEFORE_PHASE_FAIL_POINT) && !this.stopped(k)) await this.clock.sleep(HANG_POLL_MS);
  }

  private stopped(k: string): boolean {
    return this.stopping || this.entry(k).generation !== this.generation;
  }

  private checkStopping(k: string): void {
    if (this.stopped(k)) throw this.interruption;
  }

  private entry(k: string): Running {
    const entry = this.running.get(k);
    if (entry === undefined) throw new MongoError(ErrorCodes.InternalError, `DDL coordinator ${k} is not registered`);
    return entry;
  }
}

function interruptedBy(cause: 'shutdown' | 'stepDown'): MongoError {
  return cause === 'shutdown'
    ? new MongoError(ErrorCodes.InterruptedAtShutdown, 'DDL coordinator interrupted at shutdown; it resumes when the node starts again')
    : new MongoError(ErrorCodes.InterruptedDueToReplStateChange, 'DDL coordinator interrupted by a step-down; the next primary resumes it');
}

function key(id: CoordinatorId): string {
  return `${id.operationType}\u0000${id.namespace}`;
}
