import { Long } from 'bson';
import { randomBytes } from 'node:crypto';
import { RawDocument } from '../wire/raw_bson.js';
import { Limits } from '../wire/op_codes.js';

// What a node's cursors and a router's cluster cursors share, so they batch alike.

// A find or aggregate answers 101 documents in its first batch unless it says otherwise.
export const DEFAULT_FIRST_BATCH = 101;

// One batch, cut as mongod and mongos cut them: at batchSize documents (0: no count limit), or
// before the document that would take it past 16 MiB, never before the first (a batch always
// moves the cursor on).
export class BatchBuilder {
  readonly docs: RawDocument[] = [];
  private bytes = 0;

  constructor(private readonly batchSize: number) {}

  get full(): boolean {
    return this.batchSize !== 0 && this.docs.length >= this.batchSize;
  }

  // False when the document does not fit: it starts the next batch.
  add(raw: Buffer): boolean {
    if (this.docs.length > 0 && this.bytes + raw.length > Limits.maxBsonObjectSize) return false;
    this.bytes += raw.length;
    this.docs.push(new RawDocument(raw));
    return true;
  }
}

// A cursor id: random, positive, never 0 (which means "no cursor"), not one `inUse`.
export function newCursorId(inUse: (key: string) => boolean): Long {
  for (;;) {
    const id = Long.fromBytesLE([...randomBytes(8)]).and(Long.MAX_VALUE);
    if (!id.isZero() && !inUse(id.toString())) return id;
  }
}
