import { ObjectId } from 'bson';
import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import { changeLogEntry, CONFIG_SHARD } from '../catalog_decisions/changelog.js';
import { parseBalancerSettings, shouldBalance, type BalancerSettings } from '../catalog_decisions/balancer_settings.js';
import type { CollectionBalanceResult } from '../catalog_decisions/balancer_policy.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { WireClient } from '../wire/client.js';
import { BalancerRound, type RoundOutcome } from './balancer_round.js';
import { ClusterStatistics } from './cluster_statistics.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';
import type { Clock, Timer } from '../base/clock.js';

export interface BalancerTimings {
  readonly idleRoundIntervalMs: number;
  readonly migrationsThrottlingMs: number;
  readonly autoMergerIntervalMs: number;
  readonly minChunkAgeForMergeMs: number;
}

// The config server's background loop (MongoDB's Balancer): each round reads the settings, and
// when the balancer is on and inside its window, asks BalancerPolicy for the round's splits and
// migrations and runs them; it sleeps the idle interval after a quiet round and the throttling
// interval after one that moved chunks. Rounds are recorded in config.actionlog.
export class Balancer {
  private enabled = false;
  private timer: Timer | undefined;
  private running: Promise<void> | undefined;
  private inRound = false;
  private rounds = 0;
  private lastAutoMerge: number;
  // chunkCount hysteresis: collections a round left imbalanced keep balancing to < 2 apart.
  private readonly balancing = new Map<string, boolean>();
  readonly statistics: ClusterStatistics;

  constructor(
    private readonly catalog: ShardingCatalogManager,
    private readonly local: LocalCollections,
    client: WireClient,
    private readonly selfHost: string,
    private readonly timings: BalancerTimings,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.lastAutoMerge = clock.now();
    this.statistics = new ClusterStatistics(catalog, local, client);
  }

  settings(): BalancerSettings {
    return parseBalancerSettings(
      this.local.findOne('config.settings', { _id: 'balancer' }),
      this.local.findOne('config.settings', { _id: 'chunksize' }),
      this.local.findOne('config.settings', { _id: 'automerge' }),
    );
  }

  status(): Doc {
    return { mode: this.settings().mode, inBalancerRound: this.inRound, numBalancerRounds: this.rounds };
  }

  start(): void {
    this.enabled = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.enabled = false;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }

  // balancerStart and zone or draining changes: the next round starts now rather than after sleeping.
  wake(): void {
    if (this.enabled && !this.inRound) this.schedule(0);
  }

  // balancerStop returns once no round is running, so no migration starts after it answers.
  async waitForRoundToEnd(): Promise<void> {
    await this.running;
  }

  async setMode(mode: 'full' | 'off'): Promise<void> {
    this.local.write((w) => { w.update('config.settings', { _id: 'balancer' }, { $set: { stopped: mode === 'off', mode } }, { upsert: true }); });
    if (mode === 'full') this.wake();
    else await this.waitForRoundToEnd();
  }

  private schedule(delayMs: number): void {
    this.timer?.cancel();
    this.timer = this.clock.setTimer(delayMs, () => {
      this.timer = undefined;
      if (this.running) return;
      this.running = this.loopOnce().finally(() => { this.running = undefined; });
    }, { unref: true });
  }

  private async loopOnce(): Promise<void> {
    let moved = false;
    try {
      moved = await this.runRound();
    } catch (err) {
      this.logger.warn({ c: 'BALANCER', err }, 'Balancer round failed');
    }
    if (this.enabled) this.schedule(moved ? this.timings.migrationsThrottlingMs : this.timings.idleRoundIntervalMs);
  }

  // One round; true when it changed the placement (a migration, split or merge happened).
  async runRound(): Promise<boolean> {
    const settings = this.settings();
    if (!shouldBalance(settings, new Date(this.clock.now()))) return false;
    const started = this.clock.now();
    this.inRound = true;
    let outcome: RoundOutcome | undefined;
    let errmsg: string | undefined;
    try {
      const snapshot = await this.statistics.snapshot(settings);
      const round = new BalancerRound(this.catalog, settings, this.logger);
      outcome = await round.run(snapshot, this.balancing);
      if (outcome.migrations === 0 && outcome.splits === 0 && settings.autoMerge && this.clock.now() - this.lastAutoMerge >= this.timings.autoMergerIntervalMs) {
        this.lastAutoMerge = this.clock.now();
        outcome = { ...outcome, merges: await round.autoMerge(snapshot, this.clock.now() - this.timings.minChunkAgeForMergeMs) };
      }
      errmsg = outcome.errors[0];
    } catch (err) {
      errmsg = (err as Error).message;
      throw err;
    } finally {
      this.inRound = false;
      this.rounds += 1;
      this.recordRound(this.clock.now() - started, outcome, errmsg);
    }
    return outcome.migrations + outcome.splits + outcome.merges > 0;
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
    const ctx = { server: this.selfHost, clientAddr: '', time: new Date(this.clock.now()), newId: () => new ObjectId() };
    try {
      this.local.write((w) => { w.insert('config.actionlog', changeLogEntry(ctx, CONFIG_SHARD, 'balancer.round', '', details)); });
    } catch (err) {
      this.logger.warn({ c: 'BALANCER', err }, 'Could not record the balancer round');
    }
  }
}
