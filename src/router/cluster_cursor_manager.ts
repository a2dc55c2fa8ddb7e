import { Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { serializeDocument, type Doc } from '../bson/values.js';
import { RawDocument } from '../wire/raw_bson.js';
import { BatchBuilder, DEFAULT_FIRST_BATCH, newCursorId } from '../command_layer/cursor_batch.js';
import type { PartialResults } from './partial_results.js';
import type { SessionKillerMatcher } from '../sessions/kill_sessions.js';
import type { LogicalSessionId } from '../sessions/session_id.js';
import type { SessionCursors } from '../sessions/session_operation.js';
import type { CursorOwners } from '../auth/cursor_owner.js';
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
}

interface OpenMerged {
  ns: string;
  cursor: ClusterCursor;
  peeked: Doc | undefined;
  lastUsedMs: number;
  noTimeout: boolean;
  // The session of the command that opened it: only its getMores may read it, and it is closed
  // with the session.
  lsid?: LogicalSessionId;
  // The user whose command opened it ("db.user"), with --auth: only that user's getMores read it.
  owner?: string;
}

interface OpenForwarded {
  ns: string;
  forwarded: ForwardedCursor;
  lastUsedMs: number;
  noTimeout: boolean;
  // A getMore is waiting on the node: another is refused here, which leaves that one alone.
  busy: boolean;
  lsid?: LogicalSessionId;
  owner?: string;
}

type Open = OpenMerged | OpenForwarded;

export interface ClusterCursorOptions {
  // Never killed for being idle.
  noCursorTimeout?: boolean;
}


// Open cluster cursors, batched as mongod batches (batchSize documents or 16 MiB; id 0 once
// exhausted).
export class ClusterCursorManager implements SessionCursors, CursorOwners {
  private readonly open = new Map<string, Open>();

  // `clock`: idle times are on it.
  constructor(private readonly clock: Clock) {}

  async firstBatch(ns: string, cursor: ClusterCursor, batchSize: number | undefined, singleBatch = false, options: ClusterCursorOptions = {}): Promise<Doc> {
    const entry: OpenMerged = { ns, cursor, peeked: undefined, lastUsedMs: this.clock.now(), noTimeout: options.noCursorTimeout === true };
    const docs = await this.fill(entry, batchSize ?? DEFAULT_FIRST_BATCH);
    if (singleBatch || !(await this.hasMore(entry))) {
      await cursor.close();
      return { cursor: withPartial({ firstBatch: docs, id: Long.ZERO, ns }, cursor), ok: 1 };
    }
    const id = this.newId();
    this.open.set(id.toString(), entry);
    return { cursor: withPartial({ firstBatch: docs, id, ns }, cursor), ok: 1 };
  }

  // Registers a forwarded cursor whose node answered `firstBatch`: the client's reply.
  openForwarded(ns: string, forwarded: ForwardedCursor, firstBatch: Doc[], options: ClusterCursorOptions = {}): Doc {
    const id = this.newId();
    this.open.set(id.toString(), { ns, forwarded, lastUsedMs: this.clock.now(), noTimeout: options.noCursorTimeout === true, busy: false });
    return { cursor: { firstBatch, id, ns }, ok: 1 };
  }

  // `maxTimeMS` is how long a tailable awaitData cursor waits for data; other cursors refuse one,
  // as mongos does.
  async getMore(id: Long, ns: string, batchSize: number | undefined, maxTimeMS?: number): Promise<Doc> {
    const entry = this.open.get(id.toString());
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
    this.open.delete(id.toString());
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
      if (!exhausted) return { cursor: { nextBatch: docs, id, ns: entry.ns }, ok: 1 };
      this.open.delete(id.toString());
      return { cursor: { nextBatch: docs, id: Long.ZERO, ns: entry.ns }, ok: 1 };
    } catch (err) {
      this.open.delete(id.toString());
      await entry.forwarded.close();
      throw err;
    } finally {
      entry.busy = false;
    }
  }

  async kill(id: Long): Promise<boolean> {
    const entry = this.open.get(id.toString());
    if (!entry) return false;
    this.open.delete(id.toString());
    await closeEntry(entry);
    return true;
  }

  sessionOf(id: Long): LogicalSessionId | null | undefined {
    const entry = this.open.get(id.toString());
    return entry === undefined ? undefined : entry.lsid ?? null;
  }

  attachSession(id: Long, lsid: LogicalSessionId): void {
    const entry = this.open.get(id.toString());
    if (entry !== undefined) entry.lsid = lsid;
  }

  ownerOf(id: Long): { owner: string | null; ns: string } | undefined {
    const entry = this.open.get(id.toString());
    return entry === undefined ? undefined : { owner: entry.owner ?? null, ns: entry.ns };
  }

  attachOwner(id: Long, owner: string): void {
    const entry = this.open.get(id.toString());
    if (entry !== undefined) entry.owner = owner;
  }

  // The sessions that have open cursors (MongoDB's appendActiveSessions).
  sessions(): LogicalSessionId[] {
    const out: LogicalSessionId[] = [];
    for (const entry of this.open.values()) if (entry.lsid !== undefined) out.push(entry.lsid);
    return out;
  }

  // Kills the cursors of the sessions `matcher` matches, with their shard cursors; the number killed.
  async killCursorsWithMatchingSessions(matcher: SessionKillerMatcher): Promise<number> {
    const matching = [...this.open].filter(([, entry]) => entry.lsid !== undefined && matcher.match(entry.lsid));
    for (const [key] of matching) this.open.delete(key);
    await Promise.all(matching.map(([, entry]) => closeEntry(entry)));
    return matching.length;
  }

  async killIdle(idleMs: number, nowMs: number): Promise<void> {
    for (const [key, entry] of [...this.open]) {
      if (!entry.noTimeout && !('busy' in entry && entry.busy) && nowMs - entry.lastUsedMs > idleMs) {
        this.open.delete(key);
        await closeEntry(entry);
      }
    }
  }

  get openCount(): number {
    return this.open.size;
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

  private newId(): Long {
    return newCursorId((key) => this.open.has(key));
  }
}

function closeEntry(entry: Open): Promise<void> {
  return 'cursor' in entry ? entry.cursor.close() : entry.forwarded.close();
}

export function withPartial(cursor: Doc, from: { partial?: PartialResults }): Doc {
  if (from.partial?.returned) cursor.partialResultsReturned = true;
  return cursor;
}
