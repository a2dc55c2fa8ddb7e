import type { Doc } from '../../bson/values.js';

// MongoDB's QueryAnalysisSampler, on a router: the collections whose analyzer is on (as read
// from config.queryAnalyzers) and a token bucket each, refilled at samplesPerSecond up to
// queryAnalysisSamplerBurstMultiplier seconds' worth, so that sampling is by rate, not by chance.
// The rate is shared by the routers that are up, evenly (mongos's share follows each one's query
// rate). Sampled queries wait here until the router writes them (`drain`).

// queryAnalysisSamplerBurstMultiplier's default.
const BURST_MULTIPLIER = 2;

export interface ActiveAnalyzer {
  ns: string;
  collUuid: unknown;
  samplesPerSecond: number;
  startTime?: Date;
}

interface Bucket {
  analyzer: ActiveAnalyzer;
  tokens: number;
  refilledAt: number;
  // What this router sampled of the collection since its analyzer was last turned on.
  reads: number;
  writes: number;
}

export class QueryAnalysisSampler {
  private readonly buckets = new Map<string, Bucket>();
  private pending: Doc[] = [];
  // serverStatus's queryAnalyzers: the collections ever sampled here, and the queries sampled.
  private readonly sampledNamespaces = new Set<string>();
  private sampledReads = 0;
  private sampledWrites = 0;
  private routers = 1;

  // What every routed request asks first.
  get anyActive(): boolean {
    return this.buckets.size !== 0;
  }

  isSampled(ns: string): boolean {
    return this.buckets.size !== 0 && this.buckets.has(ns);
  }

  // The analyzers on now, all of them: a collection not among them is no longer sampled. A
  // bucket whose analyzer is unchanged keeps its tokens; a new or changed one starts full.
  setActive(analyzers: readonly ActiveAnalyzer[], now: number): void {
    const next = new Map<string, Bucket>();
    for (const analyzer of analyzers) {
      const kept = this.buckets.get(analyzer.ns);
      const same = kept !== undefined && kept.analyzer.samplesPerSecond === analyzer.samplesPerSecond && String(kept.analyzer.collUuid) === String(analyzer.collUuid);
      next.set(analyzer.ns, same ? { ...kept, analyzer } : { analyzer, tokens: this.capacity(analyzer), refilledAt: now, reads: 0, writes: 0 });
    }
    this.buckets.clear();
    for (const [ns, bucket] of next) this.buckets.set(ns, bucket);
  }

  // How many routers share each analyzer's rate (at least this one).
  setRouterCount(routers: number): void {
    this.routers = Math.max(1, routers);
  }

  // One analyzer turned on (`analyzer`) or off (undefined) by this router's configureQueryAnalyzer,
  // at once rather than at the next refresh.
  setOne(ns: string, analyzer: ActiveAnalyzer | undefined, now: number): void {
    const others = [...this.buckets.values()].map((b) => b.analyzer).filter((a) => a.ns !== ns);
    this.setActive(analyzer === undefined ? others : [...others, analyzer], now);
  }

  // The analyzer of `ns` when a query of it is to be sampled now (a token taken), else undefined.
  take(ns: string, now: number): ActiveAnalyzer | undefined {
    const bucket = this.buckets.get(ns);
    if (bucket === undefined) return undefined;
    const elapsed = Math.max(0, now - bucket.refilledAt) / 1000;
    bucket.tokens = Math.min(this.capacity(bucket.analyzer), bucket.tokens + elapsed * this.rate(bucket.analyzer));
    bucket.refilledAt = now;
    if (bucket.tokens < 1) return undefined;
    bucket.tokens -= 1;
    return bucket.analyzer;
  }

  record(ns: string, sample: Doc, read: boolean): void {
    this.pending.push(sample);
    this.sampledNamespaces.add(ns);
    const bucket = this.buckets.get(ns);
    if (read) {
      this.sampledReads++;
      if (bucket !== undefined) bucket.reads++;
    } else {
      this.sampledWrites++;
      if (bucket !== undefined) bucket.writes++;
    }
  }

  // mongos's `$currentOp` entries with localOps: one per collection being sampled.
  currentOp(): Doc[] {
    return [...this.buckets.values()].map(({ analyzer, reads, writes }) => ({
      desc: 'query analyzer', ns: analyzer.ns, collUuid: analyzer.collUuid, samplesPerSecond: this.rate(analyzer),
      ...(analyzer.startTime === undefined ? {} : { startTime: analyzer.startTime }), sampledReadsCount: reads, sampledWritesCount: writes,
    }));
  }

  // mongos's serverStatus section (the bytes are a mongod's).
  serverStatus(): Doc {
    return {
      activeCollections: this.buckets.size, totalCollections: new Set([...this.sampledNamespaces, ...this.buckets.keys()]).size,
      totalSampledReadsCount: this.sampledReads, totalSampledWritesCount: this.sampledWrites,
    };
  }

  drain(): Doc[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  // This router's share of the analyzer's rate, and the burst its bucket holds.
  private rate(analyzer: ActiveAnalyzer): number {
    return analyzer.samplesPerSecond / this.routers;
  }

  private capacity(analyzer: ActiveAnalyzer): number {
    return Math.max(1, this.rate(analyzer) * BURST_MULTIPLIER);
  }
}
