import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { isNumber, toDouble, type Doc } from '../bson/values.js';
import { bucketDelta, LATENCY_BOUNDS_SECONDS, quantileSeconds } from '../metrics/latency_histogram.js';
import type { ClusterSample, NodeSample } from './cluster_poller.js';
import { donation } from './cluster_poller.js';

// The console's panels from a cluster sample (pure): what the page draws, as plain JSON.

// A router that has not pinged config.mongos for this long is shown down (it pings every 10 s).
const ROUTER_PING_STALE_MS = 30_000;
// The shard map draws at most this many runs of chunks; longer maps merge neighbouring runs.
const MAX_MAP_SEGMENTS = 200;
// The throughput and latency charts: one point per sample, over the last five minutes.
export const SERIES_POINTS = 300;
// Quantiles over the last few samples: one second holds too few operations to rank.
const LATENCY_WINDOW_SAMPLES = 5;
// Operations of the router running at least this long are listed with a kill button.
export const SLOW_OPERATION_MS = 1000;

const num = (v: unknown): number => (isNumber(v) ? toDouble(v) : 0);

export function topologyPanel(s: ClusterSample): Doc {
  const node = (n: NodeSample) => ({
    name: n.name, host: n.host, up: n.status !== undefined, error: n.error ?? null, version: n.status?.version ?? null,
    uptimeSecs: n.status === undefined ? null : num(n.status.uptime), pingMs: n.pingMs === undefined ? null : Math.round(n.pingMs * 10) / 10,
    connections: num((n.status?.connections as Doc | undefined)?.current),
    replicaSet: n.replSet === undefined ? null : replicaSetView(n.replSet),
  });
  return {
    config: node(s.config),
    shards: s.shards.map((sh) => ({ ...node(sh), draining: sh.doc.draining === true, zones: Array.isArray(sh.doc.tags) ? sh.doc.tags : [] })),
    routers: s.routers.map((r) => {
      const ping = r.ping instanceof Date ? r.ping.getTime() : 0;
      return { name: String(r._id), up: s.timeMs - ping < ROUTER_PING_STALE_MS, version: r.mongoVersion ?? null, uptimeSecs: num(r.up), lastPingSecs: Math.round((s.timeMs - ping) / 1000) };
    }),
  };
}

// A set as its primary sees it: each member's state and how many seconds its last applied entry is
// behind the primary's, the term (one more per election) and when the primary was elected.
function replicaSetView(status: Doc): Doc {
  const members = Array.isArray(status.members) ? (status.members as Doc[]) : [];
  const primary = members.find((m) => m.stateStr === 'PRIMARY');
  const appliedMs = (m: Doc | undefined): number | undefined => (m?.optimeDate instanceof Date ? m.optimeDate.getTime() : undefined);
  const primaryMs = appliedMs(primary);
  return {
    set: String(status.set ?? ''),
    term: num(status.term),
    electedAt: primary?.electionDate instanceof Date ? primary.electionDate.toISOString() : null,
    members: members.map((m) => {
      const ms = appliedMs(m);
      return {
        host: String(m.name ?? ''), state: String(m.stateStr ?? ''), up: num(m.health) === 1,
        lagSecs: primaryMs === undefined || ms === undefined || num(m.health) !== 1 ? null : Math.max(0, Math.round((primaryMs - ms) / 1000)),
      };
    }),
  };
}

export function balancerPanel(s: ClusterSample): Doc {
  const window = s.balancerSettings?.activeWindow as Doc | undefined;
  return {
    mode: s.balancerStatus?.mode ?? 'unknown',
    inRound: s.balancerStatus?.inBalancerRound === true,
    rounds: num(s.balancerStatus?.numBalancerRounds),
    window: window === undefined ? null : `${String(window.start)}–${String(window.stop)}`,
    recent: s.rounds.map((r) => {
      const d = (r.details ?? {}) as Doc;
      return { time: (r.time as Date).toISOString(), ms: num(d.executionTimeMillis), moved: num(d.chunksMoved), candidates: num(d.candidateChunks), error: d.errorOccured === true ? String(d.errmsg ?? 'error') : null };
    }),
  };
}

export function collectionsPanel(s: ClusterSample): Doc[] {
  return s.collections.map(({ doc, chunks, stats }) => {
    const names = [...new Set([...chunks.map((c) => String(c.shard)), ...stats.keys()])].sort();
    return {
      ns: String(doc._id),
      key: formatValue(doc.key),
      chunks: chunks.length,
      shards: names.map((shard) => {
        const st = stats.get(shard);
        const count = num(st?.count);
        const size = num(st?.size);
        const orphanedDocs = num(st?.numOrphanDocs);
        const orphanedBytes = num(st?.orphanedSizeBytes);
        return { shard, chunks: chunks.filter((c) => c.shard === shard).length, ownedDocs: count - orphanedDocs, orphanedDocs, ownedBytes: size - orphanedBytes, orphanedBytes };
      }).filter((e) => e.chunks > 0 || e.ownedDocs > 0 || e.orphanedDocs > 0),
    };
  });
}

// Each collection's key space as runs of chunks of one shard, each as wide as its chunk count
// (chunk bounds have no common unit), with its zones placed over the chunks they cover.
export function shardMapPanel(s: ClusterSample): Doc[] {
  return s.collections.map(({ doc, chunks }) => {
    const ns = String(doc._id);
    let runs: Array<{ shard: string; from: number; to: number; min: unknown; max: unknown }> = [];
    chunks.forEach((c, i) => {
      const last = runs[runs.length - 1];
      if (last !== undefined && last.shard === c.shard) {
        last.to = i + 1;
        last.max = c.max;
      } else {
        runs.push({ shard: String(c.shard), from: i, to: i + 1, min: c.min, max: c.max });
      }
    });
    if (runs.length > MAX_MAP_SEGMENTS) runs = mergeRuns(runs, MAX_MAP_SEGMENTS);
    const zones = s.tags.filter((t) => t.ns === ns).map((t) => {
      const from = chunks.findIndex((c) => compareValues(c.max, t.min) > 0);
      const after = chunks.findIndex((c) => compareValues(c.min, t.max) >= 0);
      return { zone: String(t.tag), from: Math.max(0, from), to: after < 0 ? chunks.length : after, min: formatValue(t.min), max: formatValue(t.max) };
    });
    return {
      ns, chunks: chunks.length,
      segments: runs.map((r) => ({ shard: r.shard, from: r.from, to: r.to, min: formatValue(r.min), max: formatValue(r.max) })),
      zones,
    };
  });
}

// Neighbouring runs merged until at most `max` remain (their shard then reads "a,b").
function mergeRuns<T extends { shard: string; from: number; to: number; max: unknown }>(runs: T[], max: number): T[] {
  const per = Math.ceil(runs.length / max);
  const out: T[] = [];
  for (let i = 0; i < runs.length; i += per) {
    const group = runs.slice(i, i + per);
    out.push({ ...group[0]!, to: group[group.length - 1]!.to, max: group[group.length - 1]!.max, shard: [...new Set(group.map((g) => g.shard))].join(',') });
  }
  return out;
}

export function migrationsPanel(s: ClusterSample): Doc {
  const inFlight = s.shards.flatMap((sh) => {
    const m = donation(sh.status);
    if (m === undefined) return [];
    const total = s.rangeBytes.get(String(m.migrationId)) ?? 0;
    const cloned = num(m.clonedBytes);
    return [{
      id: String(m.migrationId), ns: String(m.ns), min: formatValue(m.min), max: formatValue(m.max), from: sh.name, to: String(m.toShard),
      phase: String(m.phase), recipientState: m.recipientState ?? null, clonedDocs: num(m.clonedDocs), clonedBytes: cloned, rangeBytes: total,
      progress: total > 0 ? Math.min(1, cloned / total) : null,
    }];
  });
  const history = s.history.map((e) => {
    const d = (e.details ?? {}) as Doc;
    const counts = (d.counts ?? {}) as Doc;
    return {
      time: (e.time as Date).toISOString(), ns: String(e.ns), outcome: e.what === 'moveChunk.commit' ? 'committed' : 'aborted',
      min: formatValue(d.min), max: formatValue(d.max), from: String(d.from), to: String(d.to), clonedDocs: num(counts.cloned), clonedBytes: num(counts.clonedBytes),
    };
  });
  return { inFlight, history };
}

// What the throughput and latency charts keep between samples: each node's cumulative latency
// histograms per category, and the points drawn so far.
export interface SeriesState {
  times: number[];
  // series name -> values, aligned with `times`.
  series: Map<string, Array<number | null>>;
  // node -> category -> the last few cumulative histograms and op counts.
  previous: Map<string, Map<string, Array<{ timeMs: number; buckets: number[] }>>>;
}

export function emptySeries(): SeriesState {
  return { times: [], series: new Map(), previous: new Map() };
}

const CATEGORIES = ['reads', 'writes', 'commands'] as const;

// Adds a sample's points: per node (the router included, from its own figures) reads + writes per
// second, and their p50 and p99 over the last few samples; and the table of the latest rates per
// node and operation type.
export function throughputPanel(state: SeriesState, timeMs: number, nodes: ReadonlyArray<{ name: string; opLatencies: Doc | undefined }>): Doc {
  const table: Doc[] = [];
  const point = new Map<string, number | null>();
  for (const { name, opLatencies } of nodes) {
    let byCategory = state.previous.get(name);
    if (byCategory === undefined) state.previous.set(name, byCategory = new Map());
    const rates: Doc = { node: name };
    let opsPerSec = 0;
    let windowBuckets: number[] | undefined;
    for (const category of CATEGORIES) {
      const buckets = histogramCounts(opLatencies?.[category] as Doc | undefined);
      const history = byCategory.get(category) ?? [];
      const last = history[history.length - 1];
      const oldest = history[0];
      const rate = last === undefined ? null : sum(bucketDelta(buckets, last.buckets)) / Math.max(0.001, (timeMs - last.timeMs) / 1000);
      const windowDelta = oldest === undefined ? undefined : bucketDelta(buckets, oldest.buckets);
      rates[category] = { opsPerSec: rate === null ? null : round(rate), p50Ms: ms(windowDelta, 0.5), p99Ms: ms(windowDelta, 0.99) };
      if (category !== 'commands') {
        opsPerSec += rate ?? 0;
        if (windowDelta !== undefined) windowBuckets = windowBuckets === undefined ? windowDelta : windowBuckets.map((n, i) => n + windowDelta[i]!);
      }
      history.push({ timeMs, buckets });
      if (history.length > LATENCY_WINDOW_SAMPLES + 1) history.shift();
      byCategory.set(category, history);
    }
    table.push(rates);
    point.set(`${name} ops/s`, round(opsPerSec));
    point.set(`${name} p50 ms`, ms(windowBuckets, 0.5));
    point.set(`${name} p99 ms`, ms(windowBuckets, 0.99));
  }
  state.times.push(Math.round(timeMs / 1000));
  for (const [key, values] of state.series) values.push(point.get(key) ?? null);
  for (const [key, value] of point) {
    if (!state.series.has(key)) state.series.set(key, [...new Array<null>(state.times.length - 1).fill(null), value]);
  }
  if (state.times.length > SERIES_POINTS) {
    state.times.shift();
    for (const values of state.series.values()) values.shift();
  }
  return { times: [...state.times], series: Object.fromEntries(state.series), table };
}

// serverStatus opLatencies histogram entries (lower bounds in micros) as per-bucket counts in the
// order of latency_histogram.ts's buckets.
function histogramCounts(category: Doc | undefined): number[] {
  const entries = Array.isArray(category?.histogram) ? (category.histogram as Doc[]) : [];
  const counts = new Array<number>(LOWER_BOUNDS_MICROS.length).fill(0);
  for (const e of entries) {
    const i = LOWER_BOUNDS_MICROS.indexOf(num(e.micros));
    if (i >= 0) counts[i] = num(e.count);
  }
  return counts;
}

const LOWER_BOUNDS_MICROS = [0, ...LATENCY_BOUNDS_SECONDS.map((b) => Math.round(b * 1e6))];

function ms(buckets: number[] | undefined, q: number): number | null {
  const seconds = buckets === undefined ? undefined : quantileSeconds(buckets, q);
  return seconds === undefined ? null : round(seconds * 1000);
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

// The router's own operations running long enough to matter (killable from the page) and every
// operation the shards report (migrations, range deletions: not killable).
export function operationsPanel(routerOps: readonly Doc[], shards: readonly NodeSample[]): Doc[] {
  const router = routerOps.filter((op) => num(op.microsecs_running) >= SLOW_OPERATION_MS * 1000).map((op) => ({
    opid: num(op.opid), where: 'router', op: String(op.op), ns: String(op.ns), secs: Math.round(num(op.microsecs_running) / 1e5) / 10,
    desc: `${String(op.desc)} ${String(op.client)}`, command: formatValue(op.command).slice(0, 200), killable: true,
  }));
  const onShards = shards.flatMap((sh) => sh.ops.map((op) => ({
    opid: `${sh.name}:${String(op.opid)}`, where: sh.name, op: String(op.op), ns: String(op.ns), secs: Math.round(num(op.microsecs_running) / 1e5) / 10,
    desc: String(op.desc), command: String(op.msg ?? ''), killable: false,
  })));
  return [...router, ...onShards];
}
