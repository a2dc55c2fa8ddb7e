import { MaxKey } from 'bson';
import { MinKey, bsonTag, type Doc } from '../src/bson/values.js';
import {
  balanceCollection,
  type ChunkInfo,
  type MigrateInfo,
  type PolicySettings,
  type ShardStats,
  type SplitInfo,
  type ZoneRange,
} from '../src/catalog_decisions/balancer_policy.js';

// A one-collection cluster that runs the real balanceCollection round after round and applies
// what it returns the way the driver would: a migration moves min(chunk bytes, maxChunkSizeBytes)
// off the start of the named chunk (moveRange without max: the donor cuts the chunk where
// autoSplitVector says, assuming uniform density inside a chunk), zone splits cut chunks at the
// boundaries, and a draining shard that has given away its last chunk is removed (removeShard
// completes). Keys are numbers: the shard key is {k: number}, chunk i starts at position start[i].

const MIN_DOC: Doc = { k: new MinKey() };
const MAX_DOC: Doc = { k: new MaxKey() };

export interface SimZone {
  from: number | 'min';
  to: number | 'max';
  zone: string;
}

export interface SimCluster {
  shards: ShardStats[]; // draining flags and zones; totalDataSizeBytes is filled in
  owners: string[]; // owner of chunk i, in key order
  sizes: number[]; // bytes of chunk i
  step: number; // key width of each initial chunk: chunk i covers [i * step, (i + 1) * step)
  zones: SimZone[];
  maxChunkSizeBytes: number;
}

export interface SimResult {
  rounds: number; // rounds that returned work (splits or migrations)
  converged: boolean; // a round returned nothing
  migrations: number;
  bytesMoved: number;
  bytesByReason: Record<MigrateInfo['reason'], number>;
  finalChunks: number;
  callMs: number[]; // every policy call, the last (empty) one included
}

export class BalancerSim {
  private shards: ShardStats[];
  private start: number[];
  private minDoc: Doc[];
  private owner: string[];
  private size: number[];
  private chunks: ChunkInfo[] = [];
  private readonly end: number;
  private readonly bytesOn = new Map<string, number>();
  private readonly chunksOn = new Map<string, number>();
  private readonly zones: ZoneRange[];
  private balancing = false;

  constructor(private readonly spec: SimCluster) {
    const n = spec.owners.length;
    this.shards = spec.shards.map((s) => ({ ...s }));
    this.start = Array.from({ length: n }, (_, i) => i * spec.step);
    this.minDoc = this.start.map((p, i) => (i === 0 ? MIN_DOC : { k: p }));
    this.owner = [...spec.owners];
    this.size = [...spec.sizes];
    this.end = n * spec.step;
    for (const s of this.shards) {
      this.bytesOn.set(s.id, 0);
      this.chunksOn.set(s.id, 0);
    }
    for (let i = 0; i < n; i++) {
      this.bytesOn.set(this.owner[i]!, this.bytesOn.get(this.owner[i]!)! + this.size[i]!);
      this.chunksOn.set(this.owner[i]!, this.chunksOn.get(this.owner[i]!)! + 1);
    }
    this.zones = spec.zones.map((z) => ({ min: z.from === 'min' ? MIN_DOC : { k: z.from }, max: z.to === 'max' ? MAX_DOC : { k: z.to }, zone: z.zone }));
    this.rebuildChunks();
  }

  run(settings: PolicySettings, maxRounds: number): SimResult {
    const result: SimResult = { rounds: 0, converged: false, migrations: 0, bytesMoved: 0, bytesByReason: { zoneViolation: 0, drain: 0, chunksImbalance: 0 }, finalChunks: 0, callMs: [] };
    while (result.rounds < maxRounds) {
      for (const s of this.shards) s.totalDataSizeBytes = this.bytesOn.get(s.id)!;
      const coll = {
        ns: 'bench.c',
        chunks: this.chunks,
        zones: this.zones,
        dataSizeBytes: new Map(this.bytesOn),
        maxChunkSizeBytes: this.spec.maxChunkSizeBytes,
        balancing: this.balancing,
      };
      const t0 = performance.now();
      const decision = balanceCollection(this.shards, coll, settings, new Set());
      result.callMs.push(performance.now() - t0);
      this.balancing = decision.balancing;
      if (decision.splits.length === 0 && decision.migrations.length === 0) {
        result.converged = true;
        break;
      }
      result.rounds++;
      if (decision.splits.length > 0) this.applySplits(decision.splits);
      result.bytesMoved += this.applyMigrations(decision.migrations, result.bytesByReason);
      result.migrations += decision.migrations.length;
      this.shards = this.shards.filter((s) => !(s.draining && this.chunksOn.get(s.id) === 0));
    }
    result.finalChunks = this.chunks.length;
    return result;
  }

  private indexOf(min: Doc): number {
    if (bsonTag(min.k) === 'MinKey') return 0;
    const k = min.k as number;
    let lo = 0;
    let hi = this.start.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.start[mid]! <= k) lo = mid;
      else hi = mid - 1;
    }
    if (this.start[lo] !== k) throw new Error(`no chunk starts at ${k}`);
    return lo;
  }

  private chunkEnd(i: number): number {
    return i + 1 < this.start.length ? this.start[i + 1]! : this.end;
  }

  // Returns the bytes moved.
  private applyMigrations(migrations: readonly MigrateInfo[], byReason: SimResult['bytesByReason']): number {
    const cuts = new Map<number, { to: string; bytes: number }>();
    let moved = 0;
    let split = false;
    for (const m of migrations) {
      const i = this.indexOf(m.min);
      if (this.owner[i] !== m.fromShard) throw new Error(`chunk ${i} is on ${this.owner[i]}, not ${m.fromShard}`);
      const bytes = Math.min(this.size[i]!, m.maxChunkSizeBytes);
      if (bytes < this.size[i]!) split = true;
      cuts.set(i, { to: m.toShard, bytes });
      moved += bytes;
      byReason[m.reason] += bytes;
      this.bytesOn.set(m.fromShard, this.bytesOn.get(m.fromShard)! - bytes);
      this.bytesOn.set(m.toShard, this.bytesOn.get(m.toShard)! + bytes);
      this.chunksOn.set(m.toShard, this.chunksOn.get(m.toShard)! + 1);
      if (bytes === this.size[i]!) this.chunksOn.set(m.fromShard, this.chunksOn.get(m.fromShard)! - 1);
    }
    if (!split) {
      for (const [i, cut] of cuts) {
        this.owner[i] = cut.to;
        this.chunks[i] = { min: this.chunks[i]!.min, max: this.chunks[i]!.max, shard: cut.to };
      }
      return moved;
    }
    this.rewrite((i, push) => {
      const cut = cuts.get(i);
      if (cut === undefined) return push(this.start[i]!, this.owner[i]!, this.size[i]!);
      if (cut.bytes === this.size[i]) return push(this.start[i]!, cut.to, cut.bytes);
      const at = this.start[i]! + ((this.chunkEnd(i) - this.start[i]!) * cut.bytes) / this.size[i]!;
      push(this.start[i]!, cut.to, cut.bytes);
      push(at, this.owner[i]!, this.size[i]! - cut.bytes);
    });
    return moved;
  }

  private applySplits(splits: readonly SplitInfo[]): void {
    const points = new Map(splits.map((s) => [this.indexOf(s.min), s.splitPoints.map((p) => p.k as number)]));
    this.rewrite((i, push) => {
      const at = points.get(i);
      if (at === undefined) return push(this.start[i]!, this.owner[i]!, this.size[i]!);
      const bounds = [this.start[i]!, ...at, this.chunkEnd(i)];
      const width = this.chunkEnd(i) - this.start[i]!;
      for (let j = 0; j + 1 < bounds.length; j++) push(bounds[j]!, this.owner[i]!, (this.size[i]! * (bounds[j + 1]! - bounds[j]!)) / width);
      this.chunksOn.set(this.owner[i]!, this.chunksOn.get(this.owner[i]!)! + at.length);
    });
  }

  // Rebuilds the chunk arrays in one pass; `each` pushes the piece(s) that replace chunk i (the
  // first piece keeps the chunk's own min document).
  private rewrite(each: (i: number, push: (start: number, owner: string, size: number) => void) => void): void {
    const start: number[] = [];
    const minDoc: Doc[] = [];
    const owner: string[] = [];
    const size: number[] = [];
    let current = 0;
    const push = (p: number, o: string, s: number): void => {
      minDoc.push(p === this.start[current] ? this.minDoc[current]! : { k: p });
      start.push(p);
      owner.push(o);
      size.push(s);
    };
    for (current = 0; current < this.start.length; current++) each(current, push);
    this.start = start;
    this.minDoc = minDoc;
    this.owner = owner;
    this.size = size;
    this.rebuildChunks();
  }

  private rebuildChunks(): void {
    const n = this.start.length;
    this.chunks = new Array<ChunkInfo>(n);
    for (let i = 0; i < n; i++) this.chunks[i] = { min: this.minDoc[i]!, max: i + 1 < n ? this.minDoc[i + 1]! : MAX_DOC, shard: this.owner[i]! };
  }
}

// The least any balancer could move and still end where this policy stops, from the initial
// state. Zones must partition the shards (each shard in at most one zone) and, if there are any,
// cover the whole key range, so every shard's measure is its bytes of one zone's chunks.
//
// For each zone (or the whole collection without zones) with shards G, total bytes S and keepers
// K (the shards of G that are not draining):
// - every byte of the zone on a shard outside G or on a draining shard must move: V bytes;
// - the policy stops only when no pair qualifies. A qualifying pair needs the donor above the
//   ideal (S / |K|), the receiver below it and a gap of at least T = 3 chunk sizes, so at the end
//   every keeper holds f_s within a window [L, L + T] (if the top donor is not above the ideal,
//   or the bottom receiver not below, all keepers are equal), with Σ f_s = S.
// - a keeper that starts with x_s > f_s must send at least x_s − f_s; those bytes are not V bytes.
//   The cheapest final state for a window [L, L + T] is f_s = clamp(x_s, L, L + T), topped up
//   or trimmed to sum to S; its outflow is Σ max(0, x_s − L − T) + max(0, Σ clamp − S). That is
//   non-increasing in L while Σ clamp <= S and non-decreasing after (its slope is #{x_s < L}), so
//   the minimum is at L*, where Σ clamp(x_s, L*, L* + T) = S, found by bisection.
// Lower bound = Σ over zones of V + Σ max(0, x_s − L* − T). It ignores that moves come in pieces
// of at most one chunk size, so the true minimum can only be higher.
//
// chunkCount measures chunks, not bytes: with equal-size chunks (the only chunkCount scenarios
// here) the same bound with x_s = chunk counts and T = 1 (an episode ends when every pair differs
// by less than 2, i.e. by at most 1), times the chunk size, is the minimum in bytes.
export function minimumBytesToMove(spec: SimCluster, settings: PolicySettings): number {
  const zoneOfShard = new Map<string, string>();
  for (const s of spec.shards) {
    if (s.zones.length > 1) throw new Error(`shard ${s.id} is in more than one zone`);
    zoneOfShard.set(s.id, s.zones[0] ?? '');
  }
  const zoneAt = (i: number): string => {
    const p = i * spec.step;
    for (const z of spec.zones) {
      if ((z.from === 'min' || z.from <= p) && (z.to === 'max' || p < z.to)) return z.zone;
    }
    if (spec.zones.length > 0) throw new Error('zones must cover the key range');
    return '';
  };
  const byCount = settings.policy === 'chunkCount';
  const unit = byCount ? spec.sizes[0]! : 1;
  if (byCount && spec.sizes.some((s) => s !== unit)) throw new Error('chunkCount scenarios need equal chunk sizes');
  if (spec.zones.some((z) => typeof z.from === 'number' && z.from % spec.step !== 0)) {
    // A zone boundary inside a chunk splits it proportionally first; count per key position.
    return minimumBytesToMove(splitAtZones(spec), settings);
  }
  const groups = new Map<string, { v: number; x: Map<string, number> }>();
  for (const s of spec.shards) {
    const g = zoneOfShard.get(s.id)!;
    if (!groups.has(g)) groups.set(g, { v: 0, x: new Map() });
    if (!s.draining) groups.get(g)!.x.set(s.id, 0);
  }
  const draining = new Set(spec.shards.filter((s) => s.draining).map((s) => s.id));
  for (let i = 0; i < spec.owners.length; i++) {
    const g = groups.get(zoneAt(i));
    if (g === undefined) throw new Error(`zone ${zoneAt(i)} has no shards`);
    const amount = byCount ? 1 : spec.sizes[i]!;
    const owner = spec.owners[i]!;
    if (draining.has(owner) || zoneOfShard.get(owner) !== zoneAt(i)) g.v += amount;
    else g.x.set(owner, g.x.get(owner)! + amount);
  }
  const window = byCount ? 1 : 3 * spec.maxChunkSizeBytes;
  let total = 0;
  for (const g of groups.values()) {
    const x = [...g.x.values()];
    const sum = x.reduce((a, b) => a + b, 0) + g.v;
    total += g.v + windowOutflow(x, sum, window);
  }
  return total * unit;
}

function windowOutflow(x: readonly number[], sum: number, window: number): number {
  if (x.length === 0 || sum === 0) return 0;
  const clampedSum = (l: number): number => x.reduce((a, v) => a + Math.min(Math.max(v, l), l + window), 0);
  let lo = sum / x.length - window;
  let hi = sum / x.length;
  for (let i = 0; i < 200 && hi - lo > 1e-9 * Math.max(1, Math.abs(hi)); i++) {
    const mid = (lo + hi) / 2;
    if (clampedSum(mid) < sum) lo = mid;
    else hi = mid;
  }
  const top = hi + window;
  return x.reduce((a, v) => a + Math.max(0, v - top), 0);
}

// The same cluster with every chunk cut at the zone boundaries inside it (bytes split by key
// width), on a finer step, so each piece lies in one zone.
function splitAtZones(spec: SimCluster): SimCluster {
  const cuts = spec.zones.flatMap((z) => [z.from, z.to]).filter((p): p is number => typeof p === 'number');
  let unit = spec.step;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  for (const c of cuts) unit = gcd(unit, c);
  const parts = spec.step / unit;
  if (spec.owners.length * parts > 5_000_000) throw new Error('zone boundaries too fine for the lower bound');
  const owners: string[] = [];
  const sizes: number[] = [];
  spec.owners.forEach((o, i) => {
    for (let j = 0; j < parts; j++) {
      owners.push(o);
      sizes.push(spec.sizes[i]! / parts);
    }
  });
  return { ...spec, owners, sizes, step: unit };
}
