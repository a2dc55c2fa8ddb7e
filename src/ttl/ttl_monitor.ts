import type { Logger } from 'pino';
import { LazyDocument } from '../bson/raw_document.js';
import type { Doc } from '../bson/values.js';
import type { IndexAccess } from '../storage/index_access.js';
import type { Collection, StorageEngine } from '../storage/storage_engine.js';
import type { TtlDeletionScope } from './ttl_deletion_scope.js';
import {
  afterBatch, afterRound, batchLimit, expirationDate, expiredRange, rangeAfter, ttlIndexes, ttlTarget,
  type ScanRange, type TtlLimits, type TtlTarget,
} from './ttl_policy.js';
import type { Clock, Timer } from '../base/clock.js';

// serverStatus.metrics.ttl, MongoDB's names.
export interface TtlStatistics {
  passes: number;
  subPasses: number;
  deletedDocuments: number;
  invalidTTLIndexSkips: number;
}

export interface TtlMonitorOptions {
  // ttlMonitorSleepSecs, in milliseconds: the wait from the end of one pass to the next.
  readonly sleepMs: number;
  readonly limits: TtlLimits;
  // Its timer, and the wall clock expiry is measured on against the dates documents hold.
  readonly clock: Clock;
  // False while the node may not write (a replica-set member that is not primary): no pass runs.
  readonly mayWrite?: () => boolean;
}

interface Victim {
  recordId: number;
  fields: Doc;
  size: number;
}

// MongoDB's TTLMonitor: every ttlMonitorSleepSecs, a pass deletes the documents whose TTL index
// holds a date at least expireAfterSeconds old, through the write path (so op observers see each
// deletion), a bounded write unit at a time with a turn of the event loop between units. The
// decisions are ttl_policy.ts's; this class holds the timer and the storage reads and writes.
export class TtlMonitor {
  readonly statistics: TtlStatistics = { passes: 0, subPasses: 0, deletedDocuments: 0, invalidTTLIndexSkips: 0 };
  private timer: Timer | undefined;
  private pass: Promise<void> | undefined;
  private stopped = false;
  // Invalid indexes are logged once each, though every sub-pass counts them.
  private readonly reported = new Set<string>();

  constructor(
    private readonly storage: StorageEngine,
    private readonly scopeOf: (ns: string) => TtlDeletionScope,
    private readonly logger: Logger,
    private readonly options: TtlMonitorOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  // Resolves once a pass in flight has stopped at its next write unit.
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.pass;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(this.options.sleepMs, () => {
      this.pass = this.runPass()
        .catch((err: unknown) => this.logger.error({ c: 'INDEX', err }, 'TTL pass failed'))
        .finally(() => {
          this.pass = undefined;
          this.schedule();
        });
    }, { unref: true });
  }

  // One pass: sub-passes until no index has more to delete.
  async runPass(): Promise<void> {
    if (this.options.mayWrite?.() === false) return;
    const at = this.options.clock.now();
    // Where each index's visit stopped: the next visit in this pass reads on from there, so
    // entries it kept (orphans) are read once per pass, and every pass ends.
    const resume = new Map<string, ScanRange>();
    try {
      while (!this.stopped && await this.subPass(at, resume));
    } finally {
      this.statistics.passes += 1;
    }
  }

  // True when some index still had more to delete when the sub-pass ran out of time.
  private async subPass(at: number, resume: Map<string, ScanRange>): Promise<boolean> {
    try {
      const { targets, invalid } = ttlIndexes(this.storage.listCollections().map((c) => ({ ns: c.ns, specs: c.indexes.map((i) => i.entry.spec) })));
      for (const bad of invalid) this.skipInvalid(bad.ns, bad.index, bad.reason);
      const started = this.options.clock.now();
      let work = targets;
      for (;;) {
        const more: TtlTarget[] = [];
        for (const target of work) {
          if (this.stopped) return false;
          if (await this.visit(target, at, resume)) more.push(target);
        }
        const next = afterRound(more.length, this.options.clock.now() - started, this.options.limits);
        if (next !== 'round') return next === 'subPass';
        work = more;
      }
    } finally {
      this.statistics.subPasses += 1;
    }
  }

  private skipInvalid(ns: string, index: string, reason: string): void {
    this.statistics.invalidTTLIndexSkips += 1;
    const key = `${ns}\u0000${index}\u0000${reason}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.logger.warn({ c: 'INDEX', ns, index, reason }, 'Skipping TTL job due to invalid index spec');
  }

  // Deletes expired documents through one index until its range is read to the end (false) or
  // the visit met its target (true: there may be more).
  private async visit(listed: TtlTarget, at: number, resume: Map<string, ScanRange>): Promise<boolean> {
    const { limits } = this.options;
    const started = this.options.clock.now();
    let deleted = 0;
    try {
      for (;;) {
        // Read again before every write unit: a turn has passed, and the collection, the index
        // or the shard's ownership may have changed in it.
        const coll = this.storage.getCollection(listed.ns);
        const index = coll?.index(listed.index);
        if (coll === undefined || index === undefined) return false;
        const target = ttlTarget(listed.ns, index.entry.spec);
        if (typeof target === 'string') return false;
        const scope = this.scopeOf(listed.ns);
        if (scope.kind === 'skip') {
          this.logger.debug({ c: 'INDEX', ns: listed.ns, index: listed.index, reason: scope.reason }, 'TTL monitor skips the collection for now');
          return false;
        }
        // A changed expireAfterSeconds is another range: it starts again.
        const key = `${listed.ns}\u0000${listed.index}\u0000${target.direction}\u0000${target.expireAfterSeconds}`;
        const range = resume.get(key) ?? expiredRange(target.direction, expirationDate(at, target.expireAfterSeconds));
        const limit = batchLimit(deleted, limits);
        const batch = this.deleteBatch(coll, index, range, limit, scope);
        deleted += batch.deleted;
        this.statistics.deletedDocuments += batch.deleted;
        resume.set(key, batch.lastEntry === undefined ? range : rangeAfter(range, batch.lastEntry));
        const next = afterBatch({ deleted, elapsedMs: this.options.clock.now() - started, entriesRead: batch.entriesRead, limit }, limits);
        if (next !== 'nextBatch') {
          if (deleted > 0) this.logger.debug({ c: 'INDEX', ns: listed.ns, index: listed.index, numDeleted: deleted }, 'Deleted expired documents using index');
          return next === 'targetMet';
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.stopped) return false;
      }
    } catch (err) {
      this.logger.error({ c: 'INDEX', ns: listed.ns, index: listed.index, err }, 'Error running TTL job on collection');
      return false;
    }
  }

  // One write unit: up to `limit` entries of the range, their documents deleted if in scope. All
  // in one synchronous turn, so nothing changes between the read and the deletion.
  private deleteBatch(coll: Collection, index: IndexAccess, range: ScanRange, limit: number, scope: TtlDeletionScope): { entriesRead: number; deleted: number; lastEntry: Buffer | undefined } {
    const entries: { keyString: Buffer; recordId: number }[] = [];
    for (const entry of index.scan(this.storage.kv, range.start, range.end, range.reverse)) {
      entries.push(entry);
      if (entries.length >= limit) break;
    }
    const last = entries[entries.length - 1];
    // A removal reads only the fields the indexes (and the ownership check) need.
    const indexed = coll.pathsIndexed();
    const paths = indexed === null ? null : scope.kind === 'owned' ? [...indexed, ...scope.fields] : indexed;
    const victims: Victim[] = [];
    const seen = new Set<number>();
    for (const { recordId } of entries) {
      // A multikey index holds a document once per date.
      if (seen.has(recordId)) continue;
      seen.add(recordId);
      const bytes = this.storage.getRecord(coll, recordId);
      if (bytes === undefined) continue;
      const stored = new LazyDocument(bytes);
      const fields = paths === null ? stored.whole() : stored.fields(paths);
      if (scope.kind === 'owned' && !owned(scope, fields)) continue;
      victims.push({ recordId, fields, size: bytes.length });
    }
    if (victims.length > 0) {
      this.storage.write((unit) => {
        for (const v of victims) unit.remove(coll, v.recordId, v.fields, v.size);
      });
    }
    return { entriesRead: entries.length, deleted: victims.length, lastEntry: last === undefined ? undefined : index.entryKey(last.keyString, last.recordId) };
  }
}

// A document whose shard key cannot be read is nobody's to delete.
function owned(scope: TtlDeletionScope & { kind: 'owned' }, doc: Doc): boolean {
  try {
    return scope.owns(doc);
  } catch {
    return false;
  }
}
