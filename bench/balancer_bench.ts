// npm run bench -- balancer: the real BalancerPolicy (src/catalog_decisions/balancer_policy.ts) on generated
// one-collection clusters, applied round by round by bench/balancer_sim.ts until a round returns
// nothing. Reports rounds to converge, bytes moved against the least any balancer could move to
// reach a state this policy accepts (bench/balancer_sim.ts explains the bound), and the time of
// each policy call.
import { MaxKey } from 'bson';
import v8 from 'node:v8';
import vm from 'node:vm';
import { MinKey, type Doc } from '../src/bson/values.js';
import { balanceCollection, type BalancerPolicyName, type ChunkInfo, type ShardStats, type ZoneRange } from '../src/catalog_decisions/balancer_policy.js';
import { BalancerSim, minimumBytesToMove, type SimCluster, type SimResult } from './balancer_sim.js';

const MB = 1024 * 1024;
const GB = 1024 * MB;
const MAX_CHUNK = 128 * MB; // 7.0's default chunk size
const STEP = 1000; // key width of an initial chunk

interface Scenario {
  name: string;
  policy: BalancerPolicyName;
  maxRounds: number;
  build(rand: () => number): SimCluster;
}

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

function shardIds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `shard${String(i).padStart(4, '0')}`);
}

function plainShards(ids: readonly string[], over: (id: string, i: number) => Partial<ShardStats> = () => ({})): ShardStats[] {
  return ids.map((id, i) => ({ id, draining: false, zones: [], totalDataSizeBytes: 0, ...over(id, i) }));
}

// Chunk owners in key order: each shard's quota cut into runs of 1..maxRun chunks, the runs
// shuffled, so shards hold interleaved key ranges as they do after some history.
function interleave(quota: ReadonlyMap<string, number>, rand: () => number, maxRun = 64): string[] {
  const runs: [string, number][] = [];
  for (const [id, n] of quota) {
    for (let left = n; left > 0;) {
      const len = Math.min(left, 1 + Math.floor(rand() * maxRun));
      runs.push([id, len]);
      left -= len;
    }
  }
  for (let i = runs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [runs[i], runs[j]] = [runs[j]!, runs[i]!];
  }
  return runs.flatMap(([id, len]) => Array<string>(len).fill(id));
}

// Splits `total` chunks among shards in proportion to their weights.
function quotas(ids: readonly string[], weights: readonly number[], total: number): Map<string, number> {
  const sum = weights.reduce((a, b) => a + b, 0);
  const q = new Map(ids.map((id, i) => [id, Math.floor((total * weights[i]!) / sum)]));
  let left = total - [...q.values()].reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % ids.length, left--) q.set(ids[i]!, q.get(ids[i]!)! + 1);
  return q;
}

const randomSizes = (n: number, rand: () => number, max = MAX_CHUNK): number[] => Array.from({ length: n }, () => Math.max(1, Math.round(rand() * max)));

function skewed(shards: number, chunks: number, weight: (i: number, rand: () => number) => number): (rand: () => number) => SimCluster {
  return (rand) => {
    const ids = shardIds(shards);
    const owners = interleave(quotas(ids, ids.map((_, i) => weight(i, rand)), chunks), rand);
    return { shards: plainShards(ids), owners, sizes: randomSizes(chunks, rand), step: STEP, zones: [], maxChunkSizeBytes: MAX_CHUNK };
  };
}

const scenarios: Scenario[] = [
  { name: 'skewed sizes, weights 1..10', policy: 'dataSize', maxRounds: 5000, build: skewed(10, 10_000, (i) => i + 1) },
  { name: 'skewed sizes, weights 0.5..2.5', policy: 'dataSize', maxRounds: 5000, build: skewed(100, 100_000, (_, r) => 0.5 + 2 * r() ** 2) },
  { name: 'skewed sizes, weights 0.8..1.2', policy: 'dataSize', maxRounds: 400, build: skewed(1000, 1_000_000, (_, r) => 0.8 + 0.4 * r()) },
  {
    // 1000 shards in 10 zones of 100, each zone a tenth of the key range; 1 chunk in 200 on a
    // random shard (mostly outside its zone); shard 0 drains.
    name: '10 zones, 0.5% misplaced, 1 draining',
    policy: 'dataSize',
    maxRounds: 1500,
    build: (rand) => {
      const ids = shardIds(1000);
      const perZone = 100_000;
      const owners: string[] = [];
      for (let z = 0; z < 10; z++) {
        const members = ids.filter((_, i) => i % 10 === z);
        const weights = members.map((id) => (id === ids[0] ? 0.2 : 0.8 + 0.4 * rand()));
        owners.push(...interleave(quotas(members, weights, perZone), rand).map((o) => (rand() < 0.005 ? ids[Math.floor(rand() * ids.length)]! : o)));
      }
      const zones = Array.from({ length: 10 }, (_, z) => ({
        from: z === 0 ? ('min' as const) : z * perZone * STEP,
        to: z === 9 ? ('max' as const) : (z + 1) * perZone * STEP,
        zone: `zone${z}`,
      }));
      return {
        shards: plainShards(ids, (_, i) => ({ zones: [`zone${i % 10}`], draining: i === 0 })),
        owners,
        sizes: randomSizes(owners.length, rand),
        step: STEP,
        zones,
        maxChunkSizeBytes: MAX_CHUNK,
      };
    },
  },
  { name: '10 empty shards added', policy: 'dataSize', maxRounds: 5000, build: skewed(100, 30_000, (i) => (i < 90 ? 1 : 0)) },
  {
    // 7.0 does not split chunks by size: a few huge ranges, cut into chunk-size pieces as they move.
    name: '100 ranges of 1-40 GB on 5 shards',
    policy: 'dataSize',
    maxRounds: 5000,
    build: (rand) => {
      const ids = shardIds(50);
      const owners = Array.from({ length: 100 }, (_, i) => ids[i % 5]!);
      return { shards: plainShards(ids), owners, sizes: randomSizes(100, rand, 40 * GB).map((s) => s + GB), step: STEP, zones: [], maxChunkSizeBytes: MAX_CHUNK };
    },
  },
  {
    // Four zones of 25 shards; chunks placed with no regard to zones (3 in 4 misplaced); one zone
    // boundary falls inside a chunk, so the first round splits it.
    name: '4 zones, chunks misplaced',
    policy: 'dataSize',
    maxRounds: 5000,
    build: (rand) => {
      const ids = shardIds(100);
      const names = ['east', 'north', 'south', 'west'];
      const n = 20_000;
      const owners = interleave(quotas(ids, ids.map(() => 1), n), rand);
      const b = (q: number): number => (q * n * STEP) / 4;
      const zones = [
        { from: 'min' as const, to: b(1) + STEP / 2, zone: names[0]! },
        { from: b(1) + STEP / 2, to: b(2), zone: names[1]! },
        { from: b(2), to: b(3), zone: names[2]! },
        { from: b(3), to: 'max' as const, zone: names[3]! },
      ];
      return { shards: plainShards(ids, (_, i) => ({ zones: [names[i % 4]!] })), owners, sizes: randomSizes(n, rand), step: STEP, zones, maxChunkSizeBytes: MAX_CHUNK };
    },
  },
  {
    name: '1 of 100 shards draining',
    policy: 'dataSize',
    maxRounds: 5000,
    build: (rand) => {
      const ids = shardIds(100);
      const n = 50_000;
      const owners = interleave(quotas(ids, ids.map(() => 1), n), rand);
      return { shards: plainShards(ids, (_, i) => ({ draining: i === 0 })), owners, sizes: randomSizes(n, rand), step: STEP, zones: [], maxChunkSizeBytes: MAX_CHUNK };
    },
  },
  {
    name: '10 empty shards added while 1 drains',
    policy: 'dataSize',
    maxRounds: 5000,
    build: (rand) => {
      const ids = shardIds(100);
      const n = 45_000;
      const owners = interleave(quotas(ids, ids.map((_, i) => (i < 90 ? 1 : 0)), n), rand);
      return { shards: plainShards(ids, (_, i) => ({ draining: i === 0 })), owners, sizes: randomSizes(n, rand), step: STEP, zones: [], maxChunkSizeBytes: MAX_CHUNK };
    },
  },
  {
    name: 'chunk counts skewed 0.5..1.5, equal chunks',
    policy: 'chunkCount',
    maxRounds: 5000,
    build: (rand) => {
      const ids = shardIds(100);
      const n = 20_000;
      const owners = interleave(quotas(ids, ids.map(() => 0.5 + rand()), n), rand);
      return { shards: plainShards(ids), owners, sizes: Array<number>(n).fill(64 * MB), step: STEP, zones: [], maxChunkSizeBytes: MAX_CHUNK };
    },
  },
  {
    name: '1 empty shard added, equal chunks',
    policy: 'chunkCount',
    maxRounds: 5000,
    build: (rand) => {
      const ids = shardIds(10);
      const n = 1000;
      const owners = interleave(quotas(ids, ids.map((_, i) => (i < 9 ? 1 : 0)), n), rand);
      return { shards: plainShards(ids), owners, sizes: Array<number>(n).fill(64 * MB), step: STEP, zones: [], maxChunkSizeBytes: MAX_CHUNK };
    },
  },
];

function gb(bytes: number): string {
  return `${(bytes / GB).toFixed(bytes >= 100 * GB ? 0 : 1)} GB`;
}

function row(s: Scenario, spec: SimCluster, minimum: number, r: SimResult): string[] {
  const mean = r.callMs.reduce((a, b) => a + b, 0) / r.callMs.length;
  const max = Math.max(...r.callMs);
  return [
    s.name,
    s.policy,
    String(spec.shards.length),
    `${spec.owners.length.toLocaleString('en-US')} → ${r.finalChunks.toLocaleString('en-US')}`,
    r.converged ? String(r.rounds) : `${r.rounds} (capped)`,
    r.migrations.toLocaleString('en-US'),
    gb(r.bytesMoved),
    gb(minimum),
    minimum > 0 ? (r.bytesMoved / minimum).toFixed(3) : '—',
    mean.toFixed(2),
    max.toFixed(2),
  ];
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

// One policy call on 1M chunks laid out as badly as it gets for the grouping pass: consecutive
// chunks on different shards (a shard look-up per chunk), 1000 zone ranges over 50 zones, a
// draining shard and zone violations everywhere. First call (cold) and 5 more.
function worstCaseRows(): string[][] {
  const n = 1_000_000;
  const shardCount = 1000;
  const docs: Doc[] = Array.from({ length: n + 1 }, (_, i) => (i === 0 ? { k: new MinKey() } : i === n ? { k: new MaxKey() } : { k: i * STEP }));
  const chunks: ChunkInfo[] = Array.from({ length: n }, (_, i) => ({ min: docs[i]!, max: docs[i + 1]!, shard: `s${(i * 7919) % shardCount}` }));
  const zones: ZoneRange[] = Array.from({ length: 1000 }, (_, z) => ({ min: docs[z * 1000]!, max: docs[z * 1000 + 1000]!, zone: `z${z % 50}` }));
  const shards = plainShards(Array.from({ length: shardCount }, (_, i) => `s${i}`), (_, i) => ({ draining: i === 0, zones: [`z${i % 50}`] }));
  const sizes = new Map(shards.map((s, i) => [s.id, (i % 17) * GB]));
  const rows: string[][] = [];
  for (const policy of ['dataSize', 'chunkCount'] as const) {
    const ms: number[] = [];
    let migrations = 0;
    for (let rep = 0; rep < 6; rep++) {
      const t0 = performance.now();
      migrations = balanceCollection(shards, { ns: 'bench.c', chunks, zones, dataSizeBytes: sizes, maxChunkSizeBytes: MAX_CHUNK }, { policy, forceJumbo: false }, new Set()).migrations.length;
      ms.push(performance.now() - t0);
    }
    const rest = ms.slice(1);
    rows.push([policy, '1,000,000', String(shardCount), '1000 (50 zones)', String(migrations), ms[0]!.toFixed(1), (rest.reduce((a, b) => a + b, 0) / rest.length).toFixed(1), Math.max(...rest).toFixed(1)]);
  }
  return rows;
}

// A full collection between scenarios, outside the timings, so one scenario's garbage (a
// million chunk objects) does not land as a GC pause inside the next one's policy calls. Pauses
// for a scenario's own garbage still count.
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

export async function runBalancerBench(): Promise<void> {
  const only = process.argv[3];
  const rows: string[][] = [];
  for (const s of scenarios) {
    if (only !== undefined && !s.name.includes(only)) continue;
    collectGarbage();
    const spec = s.build(lcg(20261122));
    const settings = { policy: s.policy, forceJumbo: false };
    const minimum = minimumBytesToMove(spec, settings);
    const t0 = performance.now();
    const result = new BalancerSim(spec).run(settings, s.maxRounds);
    const r = row(s, spec, minimum, result);
    rows.push(r);
    process.stderr.write(`${r.join(' | ')}  (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
  }
  const header = ['scenario', 'policy', 'shards', 'chunks (start → end)', 'rounds', 'migrations', 'moved', 'minimum', 'moved ÷ min', 'ms/call mean', 'ms/call max'];
  process.stdout.write(`${table(header, rows)}\n`);
  if (only === undefined || only === 'worst') {
    collectGarbage();
    const worst = worstCaseRows();
    process.stdout.write(`\n${table(['worst-case layout, policy', 'chunks', 'shards', 'zone ranges', 'migrations', 'first call ms', 'next 5: mean ms', 'max ms'], worst)}\n`);
  }
}
