import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, isPlainObject, type Doc } from '../bson/values.js';
import { OPLOG_NS } from '../oplog/oplog_entry.js';
import { seekRecordId, tsOfRecord } from '../oplog/oplog_reads.js';
import type { Collection, StorageEngine } from '../storage/storage_engine.js';
import { tickAfter, type ChangeStreamSpec } from './change_stream_spec.js';
import { eventsOfEntry, mayConcern, type StreamEvent } from './oplog_events.js';
import { LazyDocument } from '../bson/raw_document.js';
import { addImages } from './event_images.js';
import { compareTokens, highWaterMarkToken, type ResumeToken } from './resume_token.js';

// What a stream needs of its replica-set member.
export interface MemberView {
  // The majority commit point: no entry after it is returned (events never roll back).
  committed(): Timestamp | undefined;
  // Once every entry at or before `committed` is read, with `uncommitted` the oplog's first entry
  // after it, if any: the time before which no event is still to come (commit_horizon.ts), at or
  // after `committed`; without it, `committed`.
  promised?(committed: Timestamp, uncommitted: Timestamp | undefined): Timestamp;
}

export interface SourceOptions {
  storage: StorageEngine;
  member: MemberView;
  spec: ChangeStreamSpec;
  // The stages after $changeStream run on one event: what it became, or undefined if dropped.
  transform(event: Doc): Doc | undefined;
}

const NON_RESUMABLE = ['NonResumableChangeStreamError'];

function historyLost(): MongoError {
  return new MongoError(ErrorCodes.ChangeStreamHistoryLost, 'Resume of change stream was not possible, as the resume point may no longer be in the oplog.', {}, NON_RESUMABLE);
}

function tokenNotFound(token: ResumeToken): MongoError {
  return new MongoError(ErrorCodes.ChangeStreamFatalError, `cannot resume stream; the resume token was not found. {_data: "${token._data}"}`, {}, NON_RESUMABLE);
}

// A change stream's cursor source on one member: reads local.oplog.rs in order from its start
// point up to the majority commit point, turns each entry into the events the stream watches,
// skips those at or before its resume point, and runs each through the stages that follow.
// `postBatchResumeToken` is where a new stream resuming from it would pick up: the last event
// handed out, or, once everything committed has been read, the high-water mark of what the member
// promises (the commit point, or past it on an idle primary); it never goes backwards.
export class ChangeStreamSource implements IterableIterator<{ doc: Doc }> {
  private nextRecord: number;
  private readonly buffer: StreamEvent[] = [];
  // Events at or before this token are not returned (a resume point); undefined once passed.
  private skipThrough: ResumeToken | undefined;
  // The resume token's event must be found at its place in the oplog (resumeAfter, startAfter).
  private mustFind: ResumeToken | undefined;
  private consumed: ResumeToken;
  private frontier: Timestamp;
  private pbrt: ResumeToken;
  private ended = false;

  constructor(private readonly options: SourceOptions) {
    const { storage, spec } = options;
    const oplog = this.oplog();
    const start = spec.start;
    if (start.kind === 'now') {
      const last = lastTs(storage, oplog);
      const at = last === undefined ? new Timestamp({ t: 0, i: 0 }) : tickAfter(last);
      this.nextRecord = oplog.nextRecordId;
      this.frontier = at;
      this.consumed = highWaterMarkToken(at);
    } else {
      const at = start.kind === 'startAtOperationTime' ? start.ts : start.data.clusterTime;
      this.checkHistory(at);
      this.nextRecord = seekRecordId(storage, oplog, at);
      this.frontier = at;
      if (start.kind === 'startAtOperationTime') {
        this.consumed = highWaterMarkToken(at);
      } else {
        this.consumed = start.token;
        this.skipThrough = start.token;
        if (start.data.tokenType !== 0) this.mustFind = start.token;
      }
    }
    this.pbrt = this.consumed;
  }

  private oplog(): Collection {
    const oplog = this.options.storage.getCollection(OPLOG_NS);
    if (oplog === undefined) throw new MongoError(40573, 'The $changeStream stage is only supported on replica sets');
    return oplog;
  }

  // History older than the oldest entry is gone, unless that entry is the set's first.
  private checkHistory(at: Timestamp): void {
    const oplog = this.oplog();
    for (const r of this.options.storage.scanRecordsFrom(oplog, 0)) {
      if (tsOfRecord(r.bytes).lessThanOrEqual(at)) return;
      const first = deserializeDocument(r.bytes);
      if (first.op === 'n' && isPlainObject(first.o) && first.o.msg === 'initiating set') return;
      throw historyLost();
    }
  }

  // The cursor manager calls this before each getMore reads: the cap removed entries after the
  // last one the stream read, so they are lost to it.
  restore(): void {
    const oplog = this.oplog();
    for (const r of this.options.storage.scanRecordsFrom(oplog, 0)) {
      if (r.recordId > this.nextRecord && tsOfRecord(r.bytes).greaterThan(this.frontier)) throw historyLost();
      break;
    }
  }

  get isEnded(): boolean {
    return this.ended;
  }

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<{ doc: Doc }> {
    const { storage } = this.options;
    // Reads the latest state whatever view the command that opened the stream read through.
    return storage.kv.withView(undefined, () => this.step());
  }

  private step(): IteratorResult<{ doc: Doc }> {
    for (;;) {
      if (this.ended) return { done: true, value: undefined };
      const event = this.buffer.shift() ?? this.readMore();
      if (event === undefined) return { done: true, value: undefined };
      this.consumed = event.token;
      if (event.invalidate) this.ended = true;
      const out = this.options.transform(addImages(this.options.storage, this.options.spec, event));
      if (out === undefined) continue;
      if (!isPlainObject(out._id) || compareTokens(out._id as unknown as ResumeToken, event.token) !== 0 || Object.keys(out._id).length !== 1) {
        throw new MongoError(ErrorCodes.ChangeStreamFatalError, 'Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed.', {}, NON_RESUMABLE);
      }
      return { done: false, value: { doc: out } };
    }
  }

  // The next committed entries' events, until one gives some; undefined at the commit point.
  private readMore(): StreamEvent | undefined {
    const { storage, member, spec } = this.options;
    const committed = member.committed();
    if (committed === undefined) return undefined;
    const oplog = this.oplog();
    // The first entry not majority-committed yet, if any: nothing may be promised past the commit point.
    let uncommitted: Timestamp | undefined;
    for (const r of storage.scanRecordsFrom(oplog, this.nextRecord)) {
      const ts = tsOfRecord(r.bytes);
      if (ts.greaterThan(committed)) {
        uncommitted = ts;
        break;
      }
      if (this.mustFind !== undefined && ts.greaterThan(this.mustFindTs())) throw tokenNotFound(this.mustFind);
      this.nextRecord = r.recordId + 1;
      if (ts.greaterThan(this.frontier)) this.frontier = ts;
      const head = new LazyDocument(r.bytes).fields(['op', 'ns']);
      if (!mayConcern(head.op, head.ns, spec)) continue;
      const events = this.afterResumePoint(eventsOfEntry(deserializeDocument(r.bytes), spec));
      if (events.length > 0) {
        this.buffer.push(...events);
        return this.buffer.shift();
      }
    }
    if (this.mustFind !== undefined && committed.greaterThanOrEqual(this.mustFindTs())) throw tokenNotFound(this.mustFind);
    const promised = member.promised?.(committed, uncommitted) ?? committed;
    if (promised.greaterThan(this.frontier)) this.frontier = promised;
    return undefined;
  }

  private afterResumePoint(events: StreamEvent[]): StreamEvent[] {
    const through = this.skipThrough;
    if (through === undefined) return events;
    const out: StreamEvent[] = [];
    for (const e of events) {
      const order = compareTokens(e.token, through);
      if (this.mustFind !== undefined && order >= 0) {
        if (order > 0) throw tokenNotFound(this.mustFind);
        this.mustFind = undefined;
      }
      if (order > 0) out.push(e);
    }
    if (this.mustFind === undefined && out.length > 0) this.skipThrough = undefined;
    return out;
  }

  private mustFindTs(): Timestamp {
    return (this.options.spec.start as { data: { clusterTime: Timestamp } }).data.clusterTime;
  }

  // The token a reply carries. `pending`: an event was read but not handed out in this batch.
  postBatchResumeToken(lastInBatch: Doc | undefined, pending: boolean): ResumeToken {
    let candidate: ResumeToken;
    if (pending) candidate = isPlainObject(lastInBatch?._id) ? (lastInBatch._id as unknown as ResumeToken) : this.pbrt;
    else if (this.buffer.length > 0 || this.mustFind !== undefined) candidate = this.consumed;
    else {
      const mark = highWaterMarkToken(this.frontier);
      candidate = compareTokens(mark, this.consumed) > 0 ? mark : this.consumed;
    }
    if (compareTokens(candidate, this.pbrt) > 0) this.pbrt = { _data: candidate._data };
    return this.pbrt;
  }
}

function lastTs(storage: StorageEngine, oplog: Collection): Timestamp | undefined {
  for (const r of storage.scanRecords(oplog, true)) return tsOfRecord(r.bytes);
  return undefined;
}
