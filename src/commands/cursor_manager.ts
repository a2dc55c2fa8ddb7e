import { Long } from 'bson';
import { randomBytes } from 'node:crypto';
import { serializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { RawDocument } from '../wire/raw_bson.js';
import { Limits } from '../wire/op_codes.js';

export interface CursorDoc {
  doc: Doc;
  bytes?: Buffer;
}

interface OpenCursor {
  id: Long;
  ns: string;
  source: Iterator<CursorDoc>;
  peeked: CursorDoc | undefined;
  lastUsedMs: number;
}

export interface Batch {
  docs: RawDocument[];
  cursorId: Long;
}

const DEFAULT_FIRST_BATCH = 101;

// Open server-side cursors: batches are cut at batchSize documents or 16 MiB, and a cursor whose
// source is exhausted is closed in the same reply (id 0), as mongod does.
export class CursorManager {
  private readonly cursors = new Map<string, OpenCursor>();

  get openCount(): number {
    return this.cursors.size;
  }

  firstBatch(ns: string, source: Iterable<CursorDoc>, batchSize: number | undefined, singleBatch = false): Batch {
    const cursor: OpenCursor = { id: Long.ZERO, ns, source: source[Symbol.iterator](), peeked: undefined, lastUsedMs: Date.now() };
    const docs = this.fill(cursor, batchSize ?? DEFAULT_FIRST_BATCH);
    if (singleBatch || !this.hasMore(cursor)) return { docs, cursorId: Long.ZERO };
    cursor.id = this.newId();
    this.cursors.set(cursor.id.toString(), cursor);
    return { docs, cursorId: cursor.id };
  }

  getMore(id: Long, ns: string, batchSize: number | undefined): Batch {
    const cursor = this.cursors.get(id.toString());
    if (!cursor) throw new MongoError(ErrorCodes.CursorNotFound, `cursor id ${id.toString()} not found`);
    if (cursor.ns !== ns) {
      throw new MongoError(ErrorCodes.Unauthorized, `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`);
    }
    cursor.lastUsedMs = Date.now();
    const docs = this.fill(cursor, batchSize ?? 0);
    if (this.hasMore(cursor)) return { docs, cursorId: cursor.id };
    this.cursors.delete(id.toString());
    return { docs, cursorId: Long.ZERO };
  }

  kill(id: Long): boolean {
    const cursor = this.cursors.get(id.toString());
    if (!cursor) return false;
    cursor.source.return?.();
    this.cursors.delete(id.toString());
    return true;
  }

  killIdle(idleMs: number, nowMs: number): number {
    let killed = 0;
    for (const cursor of [...this.cursors.values()]) {
      if (nowMs - cursor.lastUsedMs > idleMs) {
        this.kill(cursor.id);
        killed += 1;
      }
    }
    return killed;
  }

  private fill(cursor: OpenCursor, batchSize: number): RawDocument[] {
    const docs: RawDocument[] = [];
    let bytes = 0;
    while (batchSize === 0 || docs.length < batchSize) {
      const next = this.next(cursor);
      if (!next) break;
      const raw = next.bytes ?? serializeDocument(next.doc);
      if (docs.length > 0 && bytes + raw.length > Limits.maxBsonObjectSize) {
        cursor.peeked = next;
        break;
      }
      bytes += raw.length;
      docs.push(new RawDocument(raw));
    }
    return docs;
  }

  private next(cursor: OpenCursor): CursorDoc | undefined {
    if (cursor.peeked) {
      const p = cursor.peeked;
      cursor.peeked = undefined;
      return p;
    }
    const r = cursor.source.next();
    return r.done ? undefined : r.value;
  }

  private hasMore(cursor: OpenCursor): boolean {
    if (cursor.peeked) return true;
    const r = cursor.source.next();
    if (r.done) return false;
    cursor.peeked = r.value;
    return true;
  }

  private newId(): Long {
    for (;;) {
      const id = Long.fromBytesLE([...randomBytes(8)]).and(Long.MAX_VALUE);
      if (!id.isZero() && !this.cursors.has(id.toString())) return id;
    }
  }
}

export function cursorReply(ns: string, batch: Batch, field: 'firstBatch' | 'nextBatch'): Doc {
  return { cursor: { [field]: batch.docs, id: batch.cursorId, ns }, ok: 1 };
}
