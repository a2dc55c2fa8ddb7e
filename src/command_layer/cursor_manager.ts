import { Long } from 'bson';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { RawDocument } from '../wire/raw_bson.js';
import { BatchBuilder, DEFAULT_FIRST_BATCH } from './cursor_batch.js';
import { DEFAULT_AWAIT_DATA_TIMEOUT_MS } from '../query/query_request_helper.js';
import { checkDeadlineNow, currentDeadline, withDeadline } from '../base/operation_deadline.js';
import type { SessionKillerMatcher } from '../sessions/kill_sessions.js';
import { currentReadView, type ReadView } from './read_view.js';
import { CursorRegistry, type RegisteredCursor } from './cursor_registry.js';
import type { Clock } from '../base/clock.js';

export interface CursorDoc {
  doc: Doc;
  bytes?: Buffer;
}

// A tailable cursor's source reaches the end of what is there and later has more: the cursor
// stays open at the end (when `keepOpen`), and an awaitData cursor's getMore waits for data.
export interface TailOptions {
  keepOpen: boolean;
  awaitData: boolean;
  // Called before each getMore reads: throws when the source cannot go on (CappedPositionLost).
  restore(): void;
  // Resolves when the source may have more, after `timeoutMs`, or when `signal` aborts.
  waitForData(timeoutMs: number, signal: AbortSignal): Promise<void>;
  // The source has nothing more ever (a change stream after its invalidate): the cursor closes.
  ended?(): boolean;
  // A change stream's postBatchResumeToken for a batch: `last`, the batch's last document;
  // `pending`, whether a document was read past the batch.
  postBatchResumeToken?(last: Doc | undefined, pending: boolean): Doc;
}

export interface CursorOptions {
  // Never killed for being idle.
  noCursorTimeout?: boolean;
  tail?: TailOptions;
}

interface OpenCursor extends RegisteredCursor {
  source: Iterator<CursorDoc>;
  peeked: CursorDoc | undefined;
  lastUsedMs: number;
  noTimeout: boolean;
  tail: TailOptions | undefined;
  // Set while a getMore waits for data: that getMore owns the cursor until it answers.
  pinned: AbortController | undefined;
  // What is left of the maxTimeMS of the command that opened the cursor: as in MongoDB, it
  // bounds the time of all its getMores together (a tailable cursor's does not).
  timeLeftMs: number | undefined;
  // The snapshot its command read (read_view.ts): its getMores read it too, until it closes.
  view: ReadView | undefined;
  release: (() => void) | undefined;
}

export interface Batch {
  docs: RawDocument[];
  cursorId: Long;
  postBatchResumeToken?: Doc;
}


// Open server-side cursors: batches are cut at batchSize documents or 16 MiB, and a cursor whose
// source is exhausted is closed in the same reply (id 0), as mongod does. A tailable cursor is not
// closed at the end of its data; an awaitData one's getMore that finds nothing waits up to its
// maxTimeMS (1 s by default) for more before answering an empty batch.
export class CursorManager extends CursorRegistry<OpenCursor> {
  // `clock`: idle times and awaitData's wait are on it.
  constructor(private readonly clock: Clock) {
    super();
  }

  firstBatch(ns: string, source: Iterable<CursorDoc>, batchSize: number | undefined, singleBatch = false, options: CursorOptions = {}): Batch {
    const cursor: OpenCursor = {
      id: Long.ZERO, ns, source: source[Symbol.iterator](), peeked: undefined, lastUsedMs: this.clock.now(),
      noTimeout: options.noCursorTimeout === true, tail: options.tail, pinned: undefined, timeLeftMs: undefined, lsid: undefined, owner: undefined,
      view: currentReadView(), release: undefined,
    };
    const docs = this.fill(cursor, batchSize ?? DEFAULT_FIRST_BATCH);
    const deadline = currentDeadline();
    if (deadline !== undefined && cursor.tail === undefined) cursor.timeLeftMs = Math.max(0, deadline - performance.now());
    const open = cursor.tail === undefined ? !singleBatch && this.hasMore(cursor) : cursor.tail.keepOpen && cursor.tail.ended?.() !== true;
    if (!open) return withResumeToken(cursor, { docs, cursorId: Long.ZERO });
    cursor.release = cursor.view?.adopt();
    return withResumeToken(cursor, { docs, cursorId: this.register(cursor) });
  }

  // `maxTimeMS` is how long an awaitData cursor waits for data; other cursors refuse one, as mongod does.
  getMore(id: Long, ns: string, batchSize: number | undefined, maxTimeMS?: number): Batch | Promise<Batch> {
    const cursor = this.cursor(id);
    if (!cursor) throw new MongoError(ErrorCodes.CursorNotFound, `cursor id ${id.toString()} not found`);
    if (cursor.ns !== ns) {
      throw new MongoError(ErrorCodes.Unauthorized, `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`);
    }
    if (maxTimeMS !== undefined && cursor.tail?.awaitData !== true) {
      throw new MongoError(ErrorCodes.BadValue, 'cannot set maxTimeMS on getMore command for a non-awaitData cursor');
    }
    if (cursor.pinned !== undefined) throw new MongoError(ErrorCodes.CursorInUse, `cursor id ${id.toString()} is already in use`);
    cursor.lastUsedMs = this.clock.now();
    if (cursor.tail !== undefined) return this.tailBatch(cursor, cursor.tail, batchSize ?? 0, maxTimeMS ?? DEFAULT_AWAIT_DATA_TIMEOUT_MS);
    const docs = this.fillInTime(cursor, batchSize ?? 0);
    if (this.hasMore(cursor)) return { docs, cursorId: cursor.id };
    this.close(cursor);
    return { docs, cursorId: Long.ZERO };
  }

  // A getMore under what is left of its cursor's maxTimeMS; a cursor out of time is killed, as
  // MongoDB kills one whose getMore fails.
  private fillInTime(cursor: OpenCursor, batchSize: number): RawDocument[] {
    if (cursor.timeLeftMs === undefined) return this.fill(cursor, batchSize);
    const started = performance.now();
    try {
      checkDeadlineNow(started + cursor.timeLeftMs);
      const docs = withDeadline(started + cursor.timeLeftMs, () => this.fill(cursor, batchSize));
      cursor.timeLeftMs = Math.max(0, cursor.timeLeftMs - (performance.now() - started));
      return docs;
    } catch (err) {
      this.close(cursor);
      throw err;
    }
  }

  private tailBatch(cursor: OpenCursor, tail: TailOptions, batchSize: number, awaitMs: number): Batch | Promise<Batch> {
    const docs = this.fillTail(cursor, tail, batchSize);
    if (docs.length > 0 || !tail.awaitData || tail.ended?.() === true) return this.tailReply(cursor, docs);
    return this.awaitData(cursor, tail, batchSize, this.clock.now() + awaitMs).then((b) => this.tailReply(cursor, b.docs));
  }

  // A source that has ended closes its cursor with the batch that ended it.
  private tailReply(cursor: OpenCursor, docs: RawDocument[]): Batch {
    const batch = withResumeToken(cursor, { docs, cursorId: cursor.id });
    if (cursor.tail?.ended?.() !== true) return batch;
    this.close(cursor);
    return { ...batch, cursorId: Long.ZERO };
  }

  // Only an empty batch waits: documents already found are answered at once.
  private async awaitData(cursor: OpenCursor, tail: TailOptions, batchSize: number, deadlineMs: number): Promise<Batch> {
    const pin = new AbortController();
    cursor.pinned = pin;
    try {
      for (let left = deadlineMs - this.clock.now(); left > 0; left = deadlineMs - this.clock.now()) {
        await tail.waitForData(left, pin.signal);
        if (pin.signal.aborted) throw new MongoError(ErrorCodes.CursorKilled, `cursor id ${cursor.id.toString()} was killed while it waited for data`);
        const docs = this.fillTail(cursor, tail, batchSize);
        if (docs.length > 0) return { docs, cursorId: cursor.id };
      }
      return { docs: [], cursorId: cursor.id };
    } finally {
      cursor.pinned = undefined;
      cursor.lastUsedMs = this.clock.now();
    }
  }

  // A tailable source that cannot go on kills its cursor, as a failed getMore does in mongod.
  private fillTail(cursor: OpenCursor, tail: TailOptions, batchSize: number): RawDocument[] {
    try {
      tail.restore();
      return this.fill(cursor, batchSize);
    } catch (err) {
      this.close(cursor);
      throw err;
    }
  }

  // Whether the cursor is a change stream's (its errors may carry ResumableChangeStreamError).
  isChangeStream(id: Long): boolean {
    return this.cursor(id)?.tail?.postBatchResumeToken !== undefined;
  }

  kill(id: Long): boolean {
    const cursor = this.cursor(id);
    if (!cursor) return false;
    cursor.pinned?.abort();
    cursor.source.return?.();
    this.close(cursor);
    return true;
  }

  private close(cursor: OpenCursor): void {
    this.unregister(cursor.id);
    cursor.release?.();
  }

  // Kills the cursors of the sessions `matcher` matches (a waiting getMore's too: it ends with
  // CursorKilled); the number killed.
  killCursorsWithMatchingSessions(matcher: SessionKillerMatcher): number {
    let killed = 0;
    for (const cursor of this.withMatchingSessions(matcher)) if (this.kill(cursor.id)) killed += 1;
    return killed;
  }

  killIdle(idleMs: number, nowMs: number): number {
    let killed = 0;
    for (const cursor of this.openCursors()) {
      if (!cursor.noTimeout && cursor.pinned === undefined && nowMs - cursor.lastUsedMs > idleMs) {
        this.kill(cursor.id);
        killed += 1;
      }
    }
    return killed;
  }

  private fill(cursor: OpenCursor, batchSize: number): RawDocument[] {
    const batch = new BatchBuilder(batchSize);
    while (!batch.full) {
      const next = this.next(cursor);
      if (!next) break;
      if (!batch.add(next.bytes ?? serializeDocument(next.doc))) {
        cursor.peeked = next;
        break;
      }
    }
    return batch.docs;
  }

  private next(cursor: OpenCursor): CursorDoc | undefined {
    if (cursor.peeked) {
      const p = cursor.peeked;
      cursor.peeked = undefined;
      return p;
    }
    const r = this.step(cursor);
    return r.done ? undefined : r.value;
  }

  private step(cursor: OpenCursor): IteratorResult<CursorDoc> {
    return cursor.view === undefined ? cursor.source.next() : cursor.view.run(() => cursor.source.next());
  }

  private hasMore(cursor: OpenCursor): boolean {
    if (cursor.peeked) return true;
    const r = this.step(cursor);
    if (r.done) return false;
    cursor.peeked = r.value;
    return true;
  }
}

function withResumeToken(cursor: OpenCursor, batch: Batch): Batch {
  const token = cursor.tail?.postBatchResumeToken;
  if (token === undefined) return batch;
  const last = batch.docs.at(-1);
  return { ...batch, postBatchResumeToken: token.call(cursor.tail, last === undefined ? undefined : deserializeDocument(last.bytes), cursor.peeked !== undefined) };
}

export function cursorReply(ns: string, batch: Batch, field: 'firstBatch' | 'nextBatch'): Doc {
  const cursor: Doc = { [field]: batch.docs, id: batch.cursorId, ns };
  if (batch.postBatchResumeToken !== undefined) cursor.postBatchResumeToken = batch.postBatchResumeToken;
  return { cursor, ok: 1 };
}
