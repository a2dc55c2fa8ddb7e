import { Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { serializeDocument, type Doc } from '../bson/values.js';
import { RawDocument } from '../wire/raw_bson.js';
import { BatchBuilder, DEFAULT_FIRST_BATCH } from '../command_layer/cursor_batch.js';
import { CursorRegistry, type RegisteredCursor } from '../command_layer/cursor_registry.js';
import type { PartialResults } from './partial_results.js';
import type { SessionKillerMatcher } from '../sessions/kill_sessions.js';
import type { Clock } from '../base/clock.js';

// A router-side cursor: documents merged from shard cursors, pulled one at a time. `partial` is
// set for a find with allowPartialResults: once it has left a shard out, every batch says so.
export interface ClusterCursor {
  next(): Promise<Doc | undefined>;
  close(): Promise<void>;
  partial?: PartialResults;
}

// A cursor whose batches are one other node's (a tailable cursor on the shard that has the
// capped collection): each getMore is one getMore there, answered whatever it holds, empty or not,
// as mongos answers a tailable cursor's getMore when its shard's batch ends.
export interface ForwardedCursor {
  readonly awaitData: boolean;
  getMore(batchSize: number | undefined, maxTimeMS: number | undefined): Promise<{ docs: Doc[]; exhausted: boolean }>;
  close(): Promise<void>;
  // A change stream's: the token every batch carries, the first included.
  postBatchResumeToken?(): Doc;
}

interface OpenMerged extends RegisteredCursor {
  cursor: ClusterCursor;
  peeked: Doc | undefined;
  lastUsedMs: number;
  noTimeout: boolean;
}

interface OpenForwarded extends RegisteredCursor {
  forwarded: ForwardedCursor;
  lastUsedMs: number;
  noTimeout: boolean;
  // A getMore is waiting on the node: another is refused here, which leaves that one alone.
  busy: boolean;
}

type Open = OpenMerged | OpenForwarded;

export interface ClusterCursorOptions {
  // Never killed for being idle.
  noCursorTimeout?: boolean;
}


// Open cluster cursors, batched as mongod batches (batchSize documents or 16 MiB; id 0 once
// exhausted).
export class ClusterCursorManager extends CursorRegistry<Open> {
  // `clock`: idle times are on it.
  constructor(private readonly clock: Clock) {
    super();
  }

  async firstBatch(ns: string, cursor: ClusterCursor, batchSize: number | undefined, singleBatch = false, options: ClusterCursorOptions = {}): Promise<Doc> {
    const entry: OpenMerged = { id: Long.ZERO, ns, cursor, peeked: undefined, lastUsedMs: this.clock.now(), noTimeout: options.noCursorTimeout === true };
    const docs = await this.fill(entry, batchSize ?? DEFAULT_FIRST_BATCH);
    if (singleBatch || !(await this.hasMore(entry))) {
      await cursor.close();
      return { cursor: withPartial({ firstBatch: docs, id: Long.ZERO, ns }, cursor), ok: 1 };
    }
    const id = this.register(entry);
    return { cursor: withPartial({ firstBatch: docs, id, ns }, cursor), ok: 1 };
  }

  // Registers a forwarded cursor whose node answered `firstBatch`: the client's reply.
  openForwarded(ns: string, forwarded: ForwardedCursor, firstBatch: Doc[], options: ClusterCursorOptions = {}): Doc {
    const id = this.register({ id: Long.ZERO, ns, forwarded, lastUsedMs: this.clock.now(), noTimeout: options.noCursorTimeout === true, busy: false });
    return { cursor: withResumeToken({ firstBatch, id, ns }, forwarded), ok: 1 };
  }

  // `maxTimeMS` is how long a tailable awaitData cursor waits for data; other cursors refuse one,
  // as mongos does.
  async getMore(id: Long, ns: string, batchSize: number | undefined, maxTimeMS?: number): Promise<Doc> {
    const entry = this.cursor(id);
    if (!entry) throw new MongoError(ErrorCodes.CursorNotFound, `cursor id ${id.toString()} not found`);
    if (entry.ns !== ns) throw new MongoError(ErrorCodes.Unauthorized, `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${entry.ns}`);
    const forwarded = 'forwarded' in entry ? entry.forwarded : undefined;
    if (maxTimeMS !== undefined && forwarded?.awaitData !== true) {
      throw new MongoError(ErrorCodes.BadValue, 'maxTimeMS can only be used with getMore for tailable, awaitData cursors');
    }
    entry.lastUsedMs = this.clock.now();
    if (!('cursor' in entry)) return this.forwardGetMore(id, entry, batchSize, maxTimeMS);
    const docs = await this.fill(entry, batchSize ?? 0);
    if (await this.hasMore(entry)) return { cursor: withPartial({ nextBatch: docs, id, ns }, entry.cursor), ok: 1 };
    this.unregister(id);
    await entry.cursor.close();
    return { cursor: withPartial({ nextBatch: docs, id: Long.ZERO, ns }, entry.cursor), ok: 1 };
  }

  // A failed getMore ends the cursor, as it ends the node's.
  private async forwardGetMore(id: Long, entry: OpenForwarded, batchSize: number | undefined, maxTimeMS: number | undefined): Promise<Doc> {
    if (entry.busy) throw new MongoError(ErrorCodes.CursorInUse, `cursor id ${id.toString()} is already in use`);
    entry.busy = true;
    try {
      const { docs, exhausted } = await entry.forwarded.getMore(batchSize, maxTimeMS);
      entry.lastUsedMs = this.clock.now();
      if (!exhausted) return { cursor: withResumeToken({ nextBatch: docs, id, ns: entry.ns }, entry.forwarded), ok: 1 };
      this.unregister(id);
      return { cursor: withResumeToken({ nextBatch: docs, id: Long.ZERO, ns: entry.ns }, entry.forwarded), ok: 1 };
    } catch (err) {
      this.unregister(id);
      await entry.forwarded.close();
      throw err;
    } finally {
      entry.busy = false;
    }
  }

  // Whether the cursor is a change stream's (its errors may carry ResumableChangeStreamError).
  isChangeStream(id: Long): boolean {
    const entry = this.cursor(id);
    return entry !== undefined && 'forwarded' in entry && entry.forwarded.postBatchResumeToken !== undefined;
  }

  async kill(id: Long): Promise<boolean> {
    const entry = this.cursor(id);
    if (!entry) return false;
    this.unregister(id);
    await closeEntry(entry);
    return true;
  }

  // Kills the cursors of the sessions `matcher` matches, with their shard cursors; the number killed.
  async killCursorsWithMatchingSessions(matcher: SessionKillerMatcher): Promise<number> {
    const matching = this.withMatchingSessions(matcher);
    for (const entry of matching) this.unregister(entry.id);
    await Promise.all(matching.map(closeEntry));
    return matching.length;
  }

  async killIdle(idleMs: number, nowMs: number): Promise<void> {
    for (const entry of this.openCursors()) {
      if (!entry.noTimeout && !('busy' in entry && entry.busy) && nowMs - entry.lastUsedMs > idleMs) {
        this.unregister(entry.id);
        await closeEntry(entry);
      }
    }
  }

  private async fill(entry: OpenMerged, batchSize: number): Promise<RawDocument[]> {
    const batch = new BatchBuilder(batchSize);
    while (!batch.full) {
      const doc = entry.peeked ?? await entry.cursor.next();
      entry.peeked = undefined;
      if (!doc) break;
      if (!batch.add(serializeDocument(doc))) {
        entry.peeked = doc;
        break;
      }
    }
    return batch.docs;
  }

  private async hasMore(entry: OpenMerged): Promise<boolean> {
    if (entry.peeked) return true;
    entry.peeked = await entry.cursor.next();
    return entry.peeked !== undefined;
  }
}

function closeEntry(entry: Open): Promise<void> {
  return 'cursor' in entry ? entry.cursor.close() : entry.forwarded.close();
}

function withResumeToken(cursor: Doc, from: ForwardedCursor): Doc {
  if (from.postBatchResumeToken !== undefined) cursor.postBatchResumeToken = from.postBatchResumeToken();
  return cursor;
}

export function withPartial(cursor: Doc, from: { partial?: PartialResults }): Doc {
  if (from.partial?.returned) cursor.partialResultsReturned = true;
  return cursor;
}
