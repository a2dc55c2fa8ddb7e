import { UUID, type Binary } from 'bson';
import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Network } from '../wire/network.js';
import type { Clock } from '../base/clock.js';
import type { FailPoints } from '../base/fail_points.js';
import { runCoordinatorPhase, type CoordinatorDocument, type ReshardingCatalog } from './resharding_coordinator_phases.js';
import {
  coordinatorStep, type AbortReason, type CoordinatorEffect, type CoordinatorEvent, type CoordinatorProgress, type ReshardingState,
} from './resharding_coordinator_state_machine.js';
import { decideReshardCollection, temporaryReshardingNamespace, type ReshardCollectionRequest } from './resharding_request.js';
import { decideMoveOrUnshard, type ReshardingProvenance } from './move_collection_request.js';
import { ReshardingStatistics } from './resharding_statistics.js';

// The coordinators' state documents, on the config server (MongoDB's namespace).
export const COORDINATOR_DOCS_NS = 'config.reshardingOperations';

// A state that failed for the moment, or after the decision, runs again after this pause.
const RETRY_MS = 500;

export interface CoordinatorNode {
  readonly local: LocalCollections;
  readonly client: Network;
  readonly logger: Logger;
  readonly catalog: ReshardingCatalog;
  readonly clock: Clock;
  readonly failPoints: FailPoints;
  // reshardingCriticalSectionTimeoutMillis.
  readonly criticalSectionTimeoutMs: number;
}

// One resharding: the driver of the pure coordinatorStep. It performs each effect in order: a
// persist is a write of the state document before the state's work starts; a run starts the
// state's work (resharding_coordinator_phases.ts), whose end is the next event.
class ReshardingCoordinator {
  private progress: CoordinatorProgress;
  private phase = new AbortController();
  private wake: () => void = () => {};
  private readonly commitRequested = new Promise<void>((resolve) => { this.wake = resolve; });
  private settle: (reason: AbortReason | undefined) => void = () => {};
  readonly completion = new Promise<AbortReason | undefined>((resolve) => { this.settle = resolve; });

  constructor(private readonly node: CoordinatorNode, private doc: Doc) {
    this.progress = { state: doc.state as ReshardingState, commitRequested: false, ...(doc.abortReason === undefined ? {} : { abortReason: doc.abortReason as AbortReason }) };
  }

  get ns(): string {
    return String(this.doc.ns);
  }

  get reshardingKey(): Doc {
    return this.doc.reshardingKey as Doc;
  }

  get state(): ReshardingState {
    return this.progress.state;
  }

  get provenance(): ReshardingProvenance {
    return (this.doc.provenance as ReshardingProvenance | undefined) ?? 'reshardCollection';
  }

  // The coordinator as $currentOp shows it (MongoDB's resharding metrics: coordinatorState, the
  // originating command, how long it has run).
  currentOp(nowMs: number): Doc {
    const d = this.doc;
    const started = d.startTime instanceof Date ? d.startTime.getTime() : nowMs;
    return {
      desc: `ReshardingCoordinatorService ${(d._id as Binary).toString('hex')}`, op: 'command', ns: this.ns, reshardingUUID: d._id,
      originatingCommand: { reshardCollection: this.ns, key: d.reshardingKey, unique: false, ...(d.provenance === undefined ? {} : { provenance: d.provenance }) },
      coordinatorState: this.progress.state, donorShards: d.donorShards, recipientShards: d.recipientShards,
      ...(d.approxDocumentsToCopy === undefined ? {} : { approxDocumentsToCopy: d.approxDocumentsToCopy }),
      totalOperationTimeElapsedSecs: Math.floor((nowMs - started) / 1000),
    };
  }

  private stopped = false;

  // A step-down: the coordinator writes nothing more and its requests are answered with
  // InterruptedDueToReplStateChange, which the primary shard's coordinator retries against the
  // next primary, where the persisted document resumes.
  stop(): void {
    this.stopped = true;
    this.phase.abort();
    this.settle({ code: ErrorCodes.InterruptedDueToReplStateChange, errmsg: 'the config server stepped down; the resharding resumes on its next primary' });
  }

  handle(event: CoordinatorEvent): void {
    if (this.stopped) return;
    const step = coordinatorStep(this.progress, event);
    this.progress = step.progress;
    for (const effect of step.effects) this.perform(effect);
  }

  private perform(effect: CoordinatorEffect): void {
    switch (effect.type) {
      case 'persist': {
        const set: Doc = { ...effect.noted, state: effect.state, ...(effect.abortReason === undefined ? {} : { abortReason: effect.abortReason }) };
        this.node.local.write((w) => w.update(COORDINATOR_DOCS_NS, { _id: this.doc._id }, { $set: set }));
        this.doc = { ...this.doc, ...set };
        this.node.logger.info({ c: 'RESHARD', ns: this.ns, state: effect.state }, 'resharding coordinator state');
        return;
      }
      case 'run':
        this.run(effect.state);
        return;
      case 'retry': {
        const signal = this.phase.signal;
        this.node.clock.setTimer(RETRY_MS, () => {
          if (!signal.aborted && !this.stopped) this.run(effect.state);
        });
        return;
      }
      case 'interrupt':
        this.phase.abort();
        this.phase = new AbortController();
        return;
      case 'wakeApplying':
        this.wake();
        return;
      case 'removeDocument':
        this.node.local.write((w) => w.delete(COORDINATOR_DOCS_NS, { _id: this.doc._id }));
        return;
      case 'answer':
        this.settle(effect.error);
        return;
      case 'refuse':
        throw new MongoError(effect.code, effect.errmsg);
    }
  }

  private run(state: ReshardingState): void {
    const signal = this.phase.signal;
    const ctx = {
      doc: this.doc as unknown as CoordinatorDocument, catalog: this.node.catalog, client: this.node.client, signal,
      commitRequested: this.commitRequested, clock: this.node.clock, failPoints: this.node.failPoints, criticalSectionTimeoutMs: this.node.criticalSectionTimeoutMs,
    };
    runCoordinatorPhase(state, ctx).then(
      (noted) => {
        if (!signal.aborted) this.handleLater({ type: 'phaseDone', state, noted });
      },
      (err: unknown) => {
        if (signal.aborted) return;
        const error = err instanceof MongoError ? { code: err.code, errmsg: err.message } : { code: ErrorCodes.InternalError, errmsg: String(err) };
        this.node.logger.warn({ c: 'RESHARD', ns: this.ns, state, error }, 'resharding coordinator state failed');
        this.handleLater({ type: 'phaseFailed', state, error });
      },
    );
  }

  // An event from the coordinator's own work: a write of its document that fails (this node is no
  // longer primary) stops it; the next primary resumes it from the document.
  private handleLater(event: CoordinatorEvent): void {
    try {
      this.handle(event);
    } catch (err) {
      this.node.logger.warn({ c: 'RESHARD', ns: this.ns, err: err instanceof Error ? err.message : String(err) }, 'resharding coordinator stopped');
      this.stop();
    }
  }
}

// The config server's ReshardingCoordinatorService: one coordinator per namespace. A
// reshardCollection of the same key joins the one running; another key is refused.
export class ReshardingCoordinatorService {
  private readonly coordinators = new Map<string, ReshardingCoordinator>();
  readonly statistics = new ReshardingStatistics();

  constructor(private readonly node: CoordinatorNode) {}

  async reshardCollection(req: ReshardCollectionRequest): Promise<void> {
    const running = this.coordinators.get(req.ns);
    if (running !== undefined) {
      if (compareValues(running.reshardingKey, req.key) !== 0) {
        throw new MongoError(ErrorCodes.ReshardCollectionInProgress, `reshardCollection is in progress for namespace ${req.ns}`);
      }
      return answer(await running.completion);
    }
    const { catalog } = this.node;
    const db = req.ns.slice(0, req.ns.indexOf('.'));
    const collection = catalog.collection(req.ns);
    const facts = {
      collection, chunks: collection === undefined ? [] : catalog.chunks(collection.uuid), shards: catalog.shards(), primaryShard: catalog.primaryShard(db) ?? '',
      zones: catalog.zones(req.ns),
    };
    const provenance = req.provenance ?? 'reshardCollection';
    const decision = provenance === 'reshardCollection'
      ? decideReshardCollection(req, facts)
      : decideMoveOrUnshard(provenance, req.ns, req.toShard, { ...facts, ...(req.toShard === undefined ? { shardSizes: await catalog.shardDataSizes() } : {}) });
    if (decision.kind === 'noop') return;
    const sourceUUID = decision.collection.uuid;
    const reshardingUUID: Binary = new UUID();
    const doc: Doc = {
      _id: reshardingUUID,
      ns: req.ns,
      tempNs: temporaryReshardingNamespace(req.ns, sourceUUID.toString('hex')),
      reshardingKey: req.key,
      sourceKey: decision.collection.key,
      sourceUUID,
      state: 'initializing',
      donorShards: decision.donorShards.map((id) => ({ id })),
      recipientShards: decision.recipientShards.map((id) => ({ id })),
      presetReshardedChunks: decision.newChunks.map((c) => ({ min: c.min, max: c.max, recipientShardId: c.shard })),
      zones: decision.zones.map((z) => ({ zone: z.tag, min: z.min, max: z.max })),
      ...(req.numInitialChunks === undefined ? {} : { numInitialChunks: req.numInitialChunks }),
      ...(provenance === 'reshardCollection' ? {} : { provenance }),
      startTime: new Date(this.node.clock.now()),
    };
    this.node.local.write((w) => w.insert(COORDINATOR_DOCS_NS, doc));
    answer(await this.start(doc).completion);
  }

  // abortReshardCollection, abortMoveCollection, abortUnshardCollection: answered once the abort
  // has run (or with the refusal of one after the commit decision). As in MongoDB 8.0, each aborts
  // only an operation its own command started: the router names which (`provenance`), and a
  // request that names another kind, or none, finds nothing to abort.
  async abort(ns: string, provenance: ReshardingProvenance | undefined): Promise<void> {
    const coordinator = this.running(ns, 'Could not find resharding document to abort resharding operation');
    if (coordinator.provenance !== provenance) {
      throw new MongoError(ErrorCodes.IllegalOperation, 'Could not find in-progress resharding operation with matching provenance');
    }
    coordinator.handle({ type: 'abortRequested' });
    await coordinator.completion;
  }

  // commitReshardCollection: the critical section as soon as the recipients have cloned; answered
  // once the resharding has ended.
  async commit(ns: string): Promise<void> {
    const coordinator = this.running(ns, 'Could not find in-progress resharding operation to commit');
    coordinator.handle({ type: 'commitRequested' });
    answer(await coordinator.completion);
  }

  currentOps(): Doc[] {
    const now = this.node.clock.now();
    return [...this.coordinators.values()].map((c) => c.currentOp(now));
  }

  // At a step-down: every coordinator stops where it is.
  stepDown(): void {
    for (const c of this.coordinators.values()) c.stop();
    this.coordinators.clear();
  }

  // At a step-up: every persisted coordinator resumes in its persisted state.
  recover(): void {
    for (const doc of this.node.local.find(COORDINATOR_DOCS_NS)) {
      if (!this.coordinators.has(String(doc.ns))) this.start(doc);
    }
  }

  private start(doc: Doc): ReshardingCoordinator {
    const coordinator = new ReshardingCoordinator(this.node, doc);
    this.coordinators.set(coordinator.ns, coordinator);
    this.statistics.started(coordinator.provenance);
    void coordinator.completion.then((reason) => {
      this.statistics.ended(coordinator.provenance, reason);
      if (this.coordinators.get(coordinator.ns) === coordinator) this.coordinators.delete(coordinator.ns);
    });
    coordinator.handle({ type: 'started' });
    return coordinator;
  }

  private running(ns: string, message: string): ReshardingCoordinator {
    const coordinator = this.coordinators.get(ns);
    if (coordinator === undefined || coordinator.state === 'done') throw new MongoError(ErrorCodes.NoSuchReshardCollection, message);
    return coordinator;
  }
}

function answer(reason: AbortReason | undefined): void {
  if (reason !== undefined) throw new MongoError(reason.code, reason.errmsg);
}
