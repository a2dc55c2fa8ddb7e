import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import { mergeableRuns } from '../catalog_decisions/auto_merge.js';
import { balanceCollection, type CollectionBalanceResult, type MigrateInfo } from '../catalog_decisions/balancer_policy.js';
import type { BalancerSettings } from '../catalog_decisions/balancer_settings.js';
import { checkOk } from '../wire/remote_cursor.js';
import type { BalancedCollection, ClusterSnapshot } from './cluster_statistics.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';

export interface RoundOutcome {
  readonly candidates: number; // migrations the policy chose
  readonly migrations: number; // migrations that committed
  readonly splits: number;
  readonly merges: number;
  readonly errors: string[];
}

// One balancer round over a snapshot: the policy's decisions, then their execution. Splits at
// zone boundaries run first and end the round for their collection; migrations of the round run
// in parallel (the policy gave each shard at most one).
export class BalancerRound {
  constructor(
    private readonly catalog: ShardingCatalogManager,
    private readonly settings: BalancerSettings,
    private readonly logger: Logger,
  ) {}

  plan(snapshot: ClusterSnapshot, balancing: ReadonlyMap<string, boolean>): Map<string, CollectionBalanceResult> {
    const used = new Set<string>();
    const out = new Map<string, CollectionBalanceResult>();
    const policy = { policy: this.settings.policy, forceJumbo: this.settings.attemptToBalanceJumboChunks };
    for (const coll of snapshot.collections) {
      out.set(coll.ns, balanceCollection(snapshot.shards, { ...coll, balancing: balancing.get(coll.ns) ?? false }, policy, used));
    }
    return out;
  }

  async run(snapshot: ClusterSnapshot, balancing: Map<string, boolean>): Promise<RoundOutcome> {
    const decisions = this.plan(snapshot, balancing);
    const errors: string[] = [];
    let splits = 0;
    let candidates = 0;
    const moves: Promise<boolean>[] = [];
    for (const coll of snapshot.collections) {
      const decision = decisions.get(coll.ns)!;
      balancing.set(coll.ns, decision.balancing);
      for (const split of decision.splits) {
        try {
          await this.catalog.splitChunk(split.ns, { min: split.min, max: split.max }, split.splitPoints);
          splits += 1;
        } catch (err) {
          errors.push(`split of ${coll.ns} failed: ${(err as Error).message}`);
        }
      }
      candidates += decision.migrations.length;
      for (const m of decision.migrations) {
        moves.push(this.migrate(coll, m).catch((err: unknown) => {
          errors.push(`migration of ${coll.ns} from ${m.fromShard} to ${m.toShard} failed: ${(err as Error).message}`);
          // A failed migration ends chunkCount balancing of its collection for now, as in the seeds.
          balancing.set(coll.ns, false);
          return false;
        }));
      }
    }
    const migrations = (await Promise.all(moves)).filter(Boolean).length;
    for (const e of errors) this.logger.warn({ c: 'BALANCER' }, e);
    return { candidates, migrations, splits, merges: 0, errors };
  }

  // The range moved is at most the chunk size, cut off the start of the chosen chunk where the
  // donor's autoSplitVector says (7.0's moveRange without max). A larger range that autoSplitVector
  // cannot cut is halved at its median; one that holds a single shard-key value is marked jumbo.
  private async migrate(coll: BalancedCollection, m: MigrateInfo): Promise<boolean> {
    const donor = this.catalog.shard(m.fromShard);
    const db = coll.ns.slice(0, coll.ns.indexOf('.'));
    const name = coll.ns.slice(db.length + 1);
    const keyPattern = coll.collection.key;
    const client = this.catalog.client;
    const cut = checkOk(await client.command(donor.host, db, {
      autoSplitVector: name, keyPattern, min: m.min, max: m.max, maxChunkSizeBytes: m.maxChunkSizeBytes, limit: 1,
    }));
    let max: Doc | undefined = ((cut.splitKeys as Doc[] | undefined) ?? [])[0];
    if (max === undefined && !m.forceJumbo) {
      const size = checkOk(await client.command(donor.host, 'admin', { dataSize: coll.ns, keyPattern, min: m.min, max: m.max }));
      if (Number(size.size) > m.maxChunkSizeBytes) {
        const median = checkOk(await client.command(donor.host, 'admin', { splitVector: coll.ns, keyPattern, min: m.min, max: m.max, force: true }));
        max = ((median.splitKeys as Doc[] | undefined) ?? [])[0];
        if (max === undefined) {
          this.catalog.migrations.markJumbo(coll.ns, m.min);
          this.logger.info({ c: 'BALANCER', ns: coll.ns, min: m.min, bytes: size.size }, 'Chunk is too big to move and holds one shard-key value; marked jumbo');
          return false;
        }
      }
    }
    this.logger.info({ c: 'BALANCER', ns: coll.ns, from: m.fromShard, to: m.toShard, reason: m.reason, min: m.min }, 'Balancer migrating a range');
    await this.catalog.migrations.move({ ns: coll.ns, toShard: m.toShard, min: m.min, max: max ?? m.max, waitForDelete: this.settings.waitForDelete });
    return true;
  }

  // The AutoMerger (7.0): runs of contiguous chunks on one shard, in one zone, none jumbo and none
  // moved within the history window, become one chunk each.
  async autoMerge(snapshot: ClusterSnapshot, movedBeforeMs: number): Promise<number> {
    let merges = 0;
    for (const coll of snapshot.collections) {
      if ((coll.collection as { enableAutoMerge?: boolean }).enableAutoMerge === false) continue;
      for (const run of mergeableRuns(coll.configChunks, coll.zones, movedBeforeMs)) {
        try {
          await this.catalog.mergeChunks(coll.ns, { min: run[0]!.min, max: run[run.length - 1]!.max });
          merges += 1;
        } catch (err) {
          this.logger.warn({ c: 'BALANCER', ns: coll.ns, err }, 'AutoMerger could not merge chunks');
        }
      }
    }
    return merges;
  }
}
