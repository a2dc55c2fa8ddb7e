import { assert } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { buildDistribution, layOutZones, type Distribution } from './balancer_policy_distribution.js';

// BalancerPolicy (MongoDB's balancer_policy.cpp) as one pure function per collection: given the
// shards, one collection's chunks, zone ranges and bytes per shard, decide this round's splits at
// zone boundaries and its migrations. The driver (src/configsvr/balancer_round.ts) gathers the
// snapshot, calls this for each collection with one shared `usedShards`, and executes the result.
//
// Order of the steps, each taking only shards no earlier step (or collection) used this round:
//   0. a zone boundary strictly inside a chunk: split there, and move nothing this round;
//   1. zone violations: a chunk of zone Z on a shard outside Z moves to a shard of Z;
//   2. draining: one chunk off each draining shard, to the least loaded shard allowed to take it;
//   3. imbalance, per zone (sorted names, then the "no zone" set), pairing the most loaded donor
//      with the least loaded receiver, then the next two, while the pair is imbalanced enough.
// A shard is in at most one migration per round, so a round has at most floor(shards / 2).
// MongoDB 7.0 drains before it fixes zone violations; here violations come first (the issue's
// order), which only changes which of the two a draining shard with a misplaced chunk reports.

export type BalancerPolicyName = 'dataSize' | 'chunkCount';

export interface ShardStats {
  id: string;
  draining: boolean;
  zones: readonly string[];
  maxSizeBytes?: number; // addShard's maxSize; absent or 0 = no limit
  totalDataSizeBytes: number; // all collections on the shard, compared with maxSizeBytes
}

export interface ChunkInfo {
  min: Doc;
  max: Doc;
  shard: string;
  jumbo?: boolean;
}

// Zone bounds carry every shard key field, in key order (config.tags stores them extended), so
// they compare with chunk bounds field by field.
export interface ZoneRange {
  min: Doc;
  max: Doc;
  zone: string;
}

export interface CollectionSnapshot {
  ns: string;
  chunks: readonly ChunkInfo[]; // sorted by min, tiling [MinKey, MaxKey) of the shard key
  zones: readonly ZoneRange[]; // sorted by min, non-overlapping (config.tags)
  dataSizeBytes: ReadonlyMap<string, number>; // this collection's bytes on each shard (orphans excluded); missing = 0
  maxChunkSizeBytes: number;
  balancing?: boolean; // chunkCount hysteresis: the previous round left it imbalanced
}

export interface PolicySettings {
  policy: BalancerPolicyName;
  forceJumbo: boolean;
}

export type MigrationReason = 'zoneViolation' | 'drain' | 'chunksImbalance';

export interface MigrateInfo {
  ns: string;
  fromShard: string;
  toShard: string;
  min: Doc;
  max: Doc;
  reason: MigrationReason;
  maxChunkSizeBytes: number;
  forceJumbo: boolean;
}

// A chunk straddling zone boundaries, and the boundaries inside it (ascending).
export interface SplitInfo {
  ns: string;
  shard: string;
  min: Doc;
  max: Doc;
  splitPoints: Doc[];
}

export interface CollectionBalanceResult {
  migrations: MigrateInfo[];
  splits: SplitInfo[];
  balancing: boolean; // chunkCount: still imbalanced after this round's moves (feed back as `balancing` next round)
  firstComplianceViolation?: 'zoneViolation' | 'draining' | 'chunksImbalance'; // for balancerCollectionStatus; undefined = compliant
}

// dataSize (MongoDB 6.0+): two shards are imbalanced when their bytes of the collection differ by
// at least 3 chunk sizes. balancer_policy.cpp (7.0) skips the pair when `from - to < 3 × chunk
// size`, so a difference of exactly 3 chunk sizes moves; the docs say the same in other words (a
// collection is balanced when the difference is *less than* three times the range size).
export const DATA_SIZE_IMBALANCE_CHUNKS = 3;

// chunkCount: once a balancing episode has started, it goes on until the shards' chunk counts
// differ by less than this (seed 002, "Migration Thresholds").
export const CHUNK_COUNT_SETTLED_DIFFERENCE = 2;

// The seeds' migration thresholds, as MongoDB 2.4-3.2 applied them (balancer_policy.cpp of those
// versions): the threshold comes from the collection's total number of chunks (fewer than 20 → 2,
// 20-79 → 4, 80 and more → 8), it is compared with max − min (the most loaded donor's chunks
// minus the least loaded receiver's, per zone; not with the distance from the ideal, which is
// what 3.4+ switched to), and a pair moves when `max − min >= threshold` (the code skips only
// when `imbalance < threshold`). While the collection is balancing (the previous round moved and
// left it imbalanced: MongoDB's balancedLastTime) the threshold is 2, so an episode ends only
// when every pair differs by less than 2 chunks.
export function chunkCountThreshold(totalChunks: number, balancing: boolean): number {
  if (balancing || totalChunks < 20) return CHUNK_COUNT_SETTLED_DIFFERENCE;
  if (totalChunks < 80) return 4;
  return 8;
}

// usedShards: shards already donating or receiving in this round (across collections); the
// function adds the shards it uses.
export function balanceCollection(
  shards: readonly ShardStats[],
  coll: CollectionSnapshot,
  settings: PolicySettings,
  usedShards: Set<string>,
): CollectionBalanceResult {
  assert(coll.maxChunkSizeBytes > 0, `${coll.ns}: maxChunkSizeBytes must be positive`);
  const layout = layOutZones(coll.chunks, coll.zones);
  if (layout.splits.length > 0) {
    const splits = layout.splits.map(({ chunkIndex, points }): SplitInfo => {
      const chunk = coll.chunks[chunkIndex]!;
      return { ns: coll.ns, shard: chunk.shard, min: chunk.min, max: chunk.max, splitPoints: points };
    });
    return { migrations: [], splits, balancing: coll.balancing ?? false, firstComplianceViolation: 'zoneViolation' };
  }
  const round = new PolicyRound(shards, coll, settings, buildDistribution(shards, coll.chunks, coll.zones, layout), usedShards);
  const violation = round.firstComplianceViolation();
  round.moveZoneViolations();
  round.drainShards();
  round.balanceZones();
  const result: CollectionBalanceResult = { migrations: round.migrations, splits: [], balancing: round.stillImbalanced() };
  if (violation !== undefined) result.firstComplianceViolation = violation;
  return result;
}

// What the policy measures on each shard. Copied and updated to judge the state after a round.
interface Loads {
  readonly zoneChunks: Int32Array; // per (shard, zone) cell
  readonly zoneNonJumbo: Int32Array; // per cell
  readonly shardChunks: Int32Array; // per shard
  readonly bytes: Float64Array; // per shard: this collection's bytes
}

interface Move {
  readonly from: number;
  readonly to: number;
  readonly zone: number;
  readonly jumbo: boolean;
}

class PolicyRound {
  readonly migrations: MigrateInfo[] = [];
  private readonly moves: Move[] = [];
  private readonly used: Uint8Array;
  private readonly draining: Uint8Array;
  private readonly full: Uint8Array; // over maxSize: never a receiver
  private readonly loads: Loads;
  private readonly byData: boolean;
  private readonly countThreshold: number;
  private imbalanceMoves = 0;

  constructor(
    private readonly shards: readonly ShardStats[],
    private readonly coll: CollectionSnapshot,
    private readonly settings: PolicySettings,
    private readonly dist: Distribution,
    private readonly usedShards: Set<string>,
  ) {
    const n = shards.length;
    this.used = new Uint8Array(n);
    this.draining = new Uint8Array(n);
    this.full = new Uint8Array(n);
    const bytes = new Float64Array(n);
    shards.forEach((s, i) => {
      this.used[i] = usedShards.has(s.id) ? 1 : 0;
      this.draining[i] = s.draining ? 1 : 0;
      this.full[i] = s.maxSizeBytes !== undefined && s.maxSizeBytes > 0 && s.totalDataSizeBytes > s.maxSizeBytes ? 1 : 0;
      bytes[i] = coll.dataSizeBytes.get(s.id) ?? 0;
    });
    this.loads = { zoneChunks: dist.chunkCount, zoneNonJumbo: dist.nonJumboCount, shardChunks: dist.shardChunkCount, bytes };
    this.byData = settings.policy === 'dataSize';
    this.countThreshold = chunkCountThreshold(coll.chunks.length, coll.balancing ?? false);
  }

  // Step 1. MongoDB skips jumbo chunks here; with forceJumbo they move like any other.
  moveZoneViolations(): void {
    const { columns, noZone, inZone } = this.dist;
    for (let s = 0; s < this.shards.length; s++) {
      if (this.used[s]) continue;
      for (let z = 0; z < noZone; z++) {
        const cell = s * columns + z;
        if (inZone[cell]) continue;
        const chunk = this.movableChunk(cell);
        if (chunk < 0) continue;
        const to = this.leastLoadedReceiver(z);
        if (to < 0) continue;
        this.emit(s, to, z, chunk, 'zoneViolation', this.settings.forceJumbo);
        break;
      }
    }
  }

  // Step 2. One chunk per draining shard, the first in key order among its zones that has a
  // receiver. Jumbo chunks stay unless forceJumbo; what moves is forced, as MongoDB forces every
  // migration off a draining shard (the range moves even if it turns out too big to cut).
  drainShards(): void {
    const { columns, noZone } = this.dist;
    for (let s = 0; s < this.shards.length; s++) {
      if (!this.draining[s] || this.used[s]) continue;
      const candidates: { zone: number; chunk: number }[] = [];
      for (let z = 0; z <= noZone; z++) {
        const chunk = this.movableChunk(s * columns + z);
        if (chunk >= 0) candidates.push({ zone: z, chunk });
      }
      candidates.sort((a, b) => a.chunk - b.chunk);
      for (const { zone, chunk } of candidates) {
        const to = this.leastLoadedReceiver(zone);
        if (to < 0) continue;
        this.emit(s, to, zone, chunk, 'drain', true);
        break;
      }
    }
  }

  // Step 3. Donors sorted most loaded first, receivers least loaded first; pairs are taken in
  // that order, skipping shards already used, until a pair is not imbalanced enough. Later pairs
  // are no more imbalanced than earlier ones, so stopping there misses nothing. This is MongoDB's
  // loop of _singleZoneBalance calls without rescanning every shard per migration. A donor needs
  // a chunk it may move: a jumbo one only with forceJumbo (attemptToBalanceJumboChunks).
  balanceZones(): void {
    const { columns, noZone, inZone } = this.dist;
    for (let z = 0; z <= noZone; z++) {
      const donors: number[] = [];
      const receivers: number[] = [];
      for (let s = 0; s < this.shards.length; s++) {
        const cell = s * columns + z;
        if (!inZone[cell] || this.used[s]) continue;
        if ((this.settings.forceJumbo ? this.loads.zoneChunks : this.loads.zoneNonJumbo)[cell]! > 0) donors.push(s);
        if (this.canReceive(s)) receivers.push(s);
      }
      if (donors.length === 0 || receivers.length === 0) continue;
      const projected = this.byData ? this.bytesAfterDrains(z) : undefined;
      const load = (s: number): number => (projected ? projected[s]! : this.zoneLoad(this.loads, s, z));
      donors.sort((a, b) => load(b) - load(a) || a - b);
      // Among receivers the drains will lift to the same level, the one holding least goes first.
      receivers.sort((a, b) => load(a) - load(b) || this.loads.bytes[a]! - this.loads.bytes[b]! || a - b);
      const ideal = this.idealBytes(this.loads, z);
      let d = 0;
      let r = 0;
      for (;;) {
        while (d < donors.length && this.used[donors[d]!]) d++;
        while (r < receivers.length && this.used[receivers[r]!]) r++;
        if (d === donors.length || r === receivers.length) break;
        const from = donors[d]!;
        const to = receivers[r]!;
        // The same shard is the most loaded donor and the least loaded receiver: every other
        // pair differs by <= 0.
        if (from === to || !this.imbalanced(load(from), load(to), ideal)) break;
        this.emit(from, to, z, this.movableChunk(from * columns + z), 'chunksImbalance', this.settings.forceJumbo);
        this.imbalanceMoves++;
      }
    }
  }

  // dataSize, while shards of zone z drain: each shard's bytes once the draining shards' bytes
  // have gone where the drain step sends them, one chunk at a time to the least loaded shard that
  // can take it, i.e. "water-filled" onto the least loaded keepers of the zone. The imbalance
  // step compares these. Comparing today's bytes instead, donors keep giving to shards that sit
  // low only until the drain reaches them, and end up to 3 chunk sizes lower than they had to:
  // on the bench's "1 of 100 shards draining" that moved 1.21× the minimum; this moves 1.08×,
  // in as many rounds (MongoDB 7.0's rule, today's bytes and draining shards in the ideal's
  // divisor, moved 1.35×). Draining first and balancing after, as MongoDB <= 3.2 did by
  // returning one migration per round, moved 1.08× too but took 1.8× the rounds (908 vs 501)
  // when new shards were added during a drain. chunkCount keeps comparing today's counts, as
  // every MongoDB version did.
  private bytesAfterDrains(z: number): Float64Array {
    const { columns, inZone } = this.dist;
    const out = this.loads.bytes.slice();
    let pending = 0;
    const keepers: number[] = [];
    for (let s = 0; s < this.shards.length; s++) {
      if (!inZone[s * columns + z]) continue;
      if (this.draining[s]) pending += out[s]!;
      else if (!this.full[s]) keepers.push(out[s]!);
    }
    if (pending === 0 || keepers.length === 0) return out;
    keepers.sort((a, b) => a - b);
    // The level W with Σ max(0, W − bytes) = pending over the keepers: raise the lowest j
    // keepers together until raising them to the next one would cost more than is pending.
    let prefix = 0;
    let level = 0;
    for (let j = 1; j <= keepers.length; j++) {
      prefix += keepers[j - 1]!;
      if (j === keepers.length || j * keepers[j]! - prefix >= pending) {
        level = (pending + prefix) / j;
        break;
      }
    }
    for (let s = 0; s < this.shards.length; s++) {
      if (inZone[s * columns + z] && !this.draining[s] && !this.full[s]) out[s] = Math.max(out[s]!, level);
    }
    return out;
  }

  // balancerCollectionStatus's firstComplianceViolation, judged on the whole cluster (used shards
  // included): any chunk outside its zone, then any chunk on a draining shard, then any zone
  // whose most loaded donor and least loaded receiver are imbalanced.
  firstComplianceViolation(): CollectionBalanceResult['firstComplianceViolation'] {
    const { columns, noZone, inZone, chunkCount, shardChunkCount } = this.dist;
    for (let s = 0; s < this.shards.length; s++) {
      for (let z = 0; z < noZone; z++) {
        if (!inZone[s * columns + z] && chunkCount[s * columns + z]! > 0) return 'zoneViolation';
      }
    }
    for (let s = 0; s < this.shards.length; s++) {
      if (this.draining[s] && shardChunkCount[s]! > 0) return 'draining';
    }
    for (let z = 0; z <= noZone; z++) {
      if (this.zoneImbalanced(this.loads, z, this.countThreshold)) return 'chunksImbalance';
    }
    return undefined;
  }

  // The `balancing` fed back next round. chunkCount: a balancing episode (the previous round's
  // flag, or imbalance moves this round) goes on while, after this round's moves, some zone's
  // donor and receiver differ by 2 chunks or more. dataSize has no hysteresis; the flag says
  // whether the collection still looks imbalanced, counting each move as one chunk size.
  stillImbalanced(): boolean {
    if (!this.byData && !(this.coll.balancing === true || this.imbalanceMoves > 0)) return false;
    const after: Loads = {
      zoneChunks: this.loads.zoneChunks.slice(),
      zoneNonJumbo: this.loads.zoneNonJumbo.slice(),
      shardChunks: this.loads.shardChunks.slice(),
      bytes: this.loads.bytes.slice(),
    };
    const { columns, noZone } = this.dist;
    for (const m of this.moves) {
      const fromCell = m.from * columns + m.zone;
      const toCell = m.to * columns + m.zone;
      after.zoneChunks[fromCell] -= 1;
      after.zoneChunks[toCell] += 1;
      if (!m.jumbo) {
        after.zoneNonJumbo[fromCell] -= 1;
        after.zoneNonJumbo[toCell] += 1;
      }
      after.shardChunks[m.from] -= 1;
      after.shardChunks[m.to] += 1;
      const moved = Math.min(this.coll.maxChunkSizeBytes, after.bytes[m.from]!);
      after.bytes[m.from] -= moved;
      after.bytes[m.to] += moved;
    }
    for (let z = 0; z <= noZone; z++) {
      if (this.zoneImbalanced(after, z, CHUNK_COUNT_SETTLED_DIFFERENCE)) return true;
    }
    return false;
  }

  // The top pair of zone z, ignoring which shards are used: the most loaded shard with a chunk
  // it could give, and the least loaded shard that could take one.
  private zoneImbalanced(loads: Loads, z: number, countThreshold: number): boolean {
    const { columns, inZone } = this.dist;
    let most = -Infinity;
    let least = Infinity;
    for (let s = 0; s < this.shards.length; s++) {
      const cell = s * columns + z;
      if (!inZone[cell]) continue;
      const load = this.zoneLoad(loads, s, z);
      if (loads.zoneNonJumbo[cell]! > 0 && load > most) most = load;
      if (!this.draining[s] && !this.full[s] && load < least) least = load;
    }
    if (most === -Infinity || least === Infinity) return false;
    return this.imbalanced(most, least, this.idealBytes(loads, z), countThreshold);
  }

  // dataSize (7.0's _singleZoneBalanceBasedOnDataSize): the donor is above the zone's ideal, the
  // receiver below it, and they differ by 3 chunk sizes or more. chunkCount: they differ by the
  // threshold or more.
  private imbalanced(fromLoad: number, toLoad: number, ideal: number, countThreshold = this.countThreshold): boolean {
    if (!this.byData) return fromLoad - toLoad >= countThreshold;
    return fromLoad > ideal && toLoad < ideal && fromLoad - toLoad >= DATA_SIZE_IMBALANCE_CHUNKS * this.coll.maxChunkSizeBytes;
  }

  // The bytes each shard of zone z would hold if the zone were even: all bytes on the zone's
  // shards over the shards that will keep data. MongoDB counts draining shards in the divisor
  // too, which, while a shard drains, calls the remaining shards over-full and stops balancing
  // among them; their share of the draining shard's data is theirs to take.
  private idealBytes(loads: Loads, z: number): number {
    if (!this.byData) return 0;
    const { columns, inZone } = this.dist;
    let total = 0;
    let keepers = 0;
    for (let s = 0; s < this.shards.length; s++) {
      if (!inZone[s * columns + z]) continue;
      total += loads.bytes[s]!;
      if (!this.draining[s]) keepers++;
    }
    return keepers === 0 ? NaN : total / keepers;
  }

  // Per zone: dataSize measures the collection's bytes on the shard (all zones, as 7.0 does);
  // chunkCount the shard's chunks in that zone.
  private zoneLoad(loads: Loads, s: number, z: number): number {
    return this.byData ? loads.bytes[s]! : loads.zoneChunks[s * this.dist.columns + z]!;
  }

  // For a zone violation or a drain: the least loaded shard that may take a chunk of zone z, by
  // the collection's bytes (dataSize) or chunks (chunkCount) on the shard; ties go to the first.
  private leastLoadedReceiver(z: number): number {
    const { columns, inZone } = this.dist;
    let best = -1;
    let bestLoad = Infinity;
    for (let s = 0; s < this.shards.length; s++) {
      if (!inZone[s * columns + z] || !this.canReceive(s) || this.used[s]) continue;
      const load = this.byData ? this.loads.bytes[s]! : this.loads.shardChunks[s]!;
      if (load < bestLoad) {
        best = s;
        bestLoad = load;
      }
    }
    return best;
  }

  private canReceive(s: number): boolean {
    return !this.draining[s] && !this.full[s];
  }

  private movableChunk(cell: number): number {
    return this.settings.forceJumbo ? this.dist.firstChunk[cell]! : this.dist.firstNonJumbo[cell]!;
  }

  private emit(from: number, to: number, zone: number, chunkIndex: number, reason: MigrationReason, forceJumbo: boolean): void {
    assert(from !== to && !this.used[from] && !this.used[to], 'a shard takes part in at most one migration per round');
    assert(this.canReceive(to), 'never migrate to a draining or full shard');
    const chunk = this.coll.chunks[chunkIndex]!;
    assert(chunk.shard === this.shards[from]!.id, 'the chunk is on the donor');
    this.used[from] = 1;
    this.used[to] = 1;
    this.usedShards.add(this.shards[from]!.id);
    this.usedShards.add(this.shards[to]!.id);
    this.moves.push({ from, to, zone, jumbo: chunk.jumbo === true });
    this.migrations.push({
      ns: this.coll.ns,
      fromShard: this.shards[from]!.id,
      toShard: this.shards[to]!.id,
      min: chunk.min,
      max: chunk.max,
      reason,
      maxChunkSizeBytes: this.coll.maxChunkSizeBytes,
      forceJumbo,
    });
  }
}
