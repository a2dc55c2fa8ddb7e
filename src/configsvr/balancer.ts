import { ObjectId } from 'bson';
import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import { changeLogEntry, CONFIG_SHARD } from '../catalog_decisions/changelog.js';
import type { Clock, Timer } from '../base/clock.js';
import { parseBalancerSettings, type BalancerSettings } from '../catalog_decisions/balancer_settings.js';
import type { CollectionBalanceResult } from '../catalog_decisions/balancer_policy.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Network } from '../wire/network.js';
import {
  balancerLoopInitialState, balancerLoopStep, inBalancerRound, isRoundRunning,
  type BalancerLoopEffect, type BalancerLoopEvent, type BalancerLoopState, type BalancerTimings,
} from './balancer_loop.js';
import { BalancerRound, type RoundOutcome } from './balancer_round.js';
import { ClusterStatistics, type ClusterSnapshot } from './cluster_statistics.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';

// The config server's background loop (MongoDB's Balancer): each round reads the settings, and
// when the balancer is on and inside its window, asks BalancerPolicy for the round's splits and
// migrations and runs them; it sleeps the idle interval after a quiet round and the throttling
// interval after one that moved chunks. Rounds are recorded in config.actionlog. What to do next
// is balancer_loop.ts's to decide; this driver reads, balances, merges, records and keeps the
// timer, on its Clock.
export class Balancer {
  private state: BalancerLoopState;
  private readonly queue: BalancerLoopEffect[] = [];
  private draining = false;
  private timer: Timer | undefined;
  // Settles when the round in progress ends (balancerStop waits for it).
  private running: { readonly done: Promise<void>; readonly end: () => void } | undefined;
  // The round balancing now and the statistics it balanced, for its merges.
  private round: { readonly round: BalancerRound; readonly snapshot: ClusterSnapshot } | undefined;
  // chunkCount hysteresis: collections a round left imbalanced keep balancing to < 2 apart.
  private readonly balancing = new Map<string, boolean>();
  readonly statistics: ClusterStatistics;

  constructor(
    private readonly catalog: ShardingCatalogManager,
    private readonly local: LocalCollections,
    client: Network,
    // Known once the port is bound: a process given port 0 learns it then.
    private readonly selfHost: () => string,
    timings: BalancerTimings,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.statistics = new ClusterStatistics(catalog, local, client);
    this.state = balancerLoopInitialState(timings, clock.now());
  }

  settings(): BalancerSettings {
    return parseBalancerSettings(
      this.local.findOne('config.settings', { _id: 'balancer' }),
      this.local.findOne('config.settings', { _id: 'chunksize' }),
      this.local.findOne('config.settings', { _id: 'automerge' }),
    );
  }

  status(): Doc {
    return { mode: this.settings().mode, inBalancerRound: inBalancerRound(this.state), numBalancerRounds: this.state.rounds };
  }

  start(): void {
    this.step({ type: 'start' });
  }

  async stop(): Promise<void> {
    this.step({ type: 'stop' });
    await this.running?.done;
  }

  // balancerStart and zone or draining changes: the next round starts now rather than after sleeping.
  wake(): void {
    this.step({ type: 'wake' });
  }

  // balancerStop returns once no round is running, so no migration starts after it answers.
  async waitForRoundToEnd(): Promise<void> {
    await this.running?.done;
  }

  async setMode(mode: 'full' | 'off'): Promise<void> {
    this.local.write((w) => { w.update('config.settings', { _id: 'balancer' }, { $set: { stopped: mode === 'off', mode } }, { upsert: true }); });
    if (mode === 'full') this.wake();
    else await this.waitForRoundToEnd();
  }

  private step(event: BalancerLoopEvent): void {
    const { state, effects } = balancerLoopStep(this.state, event);
    const wasRunning = isRoundRunning(this.state);
    this.state = state;
    if (!wasRunning && isRoundRunning(state)) {
      let end!: () => void;
      const done = new Promise<void>((resolve) => { end = resolve; });
      this.running = { done, end };
    }
    this.queue.push(...effects);
    this.drain();
    if (wasRunning && !isRoundRunning(this.state)) {
      this.running?.end();
      this.running = undefined;
    }
  }

  // Effects run in order; a step an effect answers at once runs before the effects after it.
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift()) this.execute(e);
    } finally {
      this.draining = false;
    }
  }

  private execute(e: BalancerLoopEffect): void {
    switch (e.type) {
      case 'armTimer':
        this.timer?.cancel();
        this.timer = this.clock.setTimer(e.ms, () => {
          this.timer = undefined;
          this.step({ type: 'timerFired' });
        }, { unref: true });
        return;
      case 'cancelTimer':
        this.timer?.cancel();
        this.timer = undefined;
        return;
      case 'readSettings': {
        let settings: BalancerSettings;
        try {
          settings = this.settings();
        } catch (err) {
          return this.failed(err);
        }
        return this.step({ type: 'settingsRead', settings, nowMs: this.clock.now() });
      }
      case 'balance':
        void (async () => {
          const snapshot = await this.statistics.snapshot(e.settings);
          const round = new BalancerRound(this.catalog, e.settings, this.logger);
          this.round = { round, snapshot };
          return round.run(snapshot, this.balancing);
        })().then((outcome) => this.step({ type: 'balanced', outcome, nowMs: this.clock.now() }), (err: unknown) => this.failed(err));
        return;
      case 'autoMerge': {
        // The round found nothing to move or split, so its snapshot still holds.
        const { round, snapshot } = this.round!;
        round.autoMerge(snapshot, e.movedBeforeMs).then((merges) => this.step({ type: 'merged', merges, nowMs: this.clock.now() }), (err: unknown) => this.failed(err));
        return;
      }
      case 'recordRound':
        this.round = undefined;
        return this.recordRound(e.executionTimeMillis, e.outcome, e.errmsg);
    }
  }

  private failed(err: unknown): void {
    this.logger.warn({ c: 'BALANCER', err }, 'Balancer round failed');
    this.step({ type: 'roundFailed', errmsg: (err as Error).message, nowMs: this.clock.now() });
  }

  // balancerCollectionStatus: would the policy move anything of this collection now?
  async collectionStatus(ns: string): Promise<CollectionBalanceResult> {
    const settings = this.settings();
    const snapshot = await this.statistics.snapshot(settings, ns);
    return new BalancerRound(this.catalog, settings, this.logger).plan(snapshot, new Map()).get(ns) ?? { migrations: [], splits: [], balancing: false };
  }

  private recordRound(executionTimeMillis: number, outcome: RoundOutcome | undefined, errmsg: string | undefined): void {
    // `errorOccured` is MongoDB's spelling, and what mongosh's sh.status() reads.
    const details: Doc = { executionTimeMillis, errorOccured: errmsg !== undefined };
    if (outcome) {
      details.candidateChunks = outcome.candidates;
      details.chunksMoved = outcome.migrations;
    }
    if (errmsg !== undefined) details.errmsg = errmsg;
    const ctx = { server: this.selfHost(), clientAddr: '', time: new Date(this.clock.now()), newId: () => new ObjectId() };
    try {
      this.local.write((w) => { w.insert('config.actionlog', changeLogEntry(ctx, CONFIG_SHARD, 'balancer.round', '', details)); });
    } catch (err) {
      this.logger.warn({ c: 'BALANCER', err }, 'Could not record the balancer round');
    }
  }
}
