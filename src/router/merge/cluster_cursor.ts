import { assert } from '../../base/errors.js';
import type { Doc } from '../../bson/values.js';

// The router's side of a client cursor (MongoDB's ClusterClientCursor): documents come from the
// merged shard streams, and closing it, whether the client killed it, it timed out or it failed,
// releases the shard cursors through the callback the router gave it. One call at a time: the
// cursor manager pins a cursor while a getMore runs on it, as mongos does.
export class ClusterCursor {
  private readonly iterator: AsyncIterator<Doc>;
  private peeked: Doc | undefined;
  private exhausted = false;
  private closed = false;
  private busy = false;
  private returned = 0;

  constructor(merged: AsyncIterable<Doc>, private readonly closeShards: () => Promise<void>) {
    this.iterator = merged[Symbol.asyncIterator]();
  }

  get returnedSoFar(): number {
    return this.returned;
  }

  // undefined once the results are exhausted or the cursor is closed.
  async next(): Promise<Doc | undefined> {
    const doc = this.peeked ?? (await this.pull());
    this.peeked = undefined;
    if (doc !== undefined) this.returned++;
    return doc;
  }

  // Whether next() will return a document; waits for the shards if it must.
  async hasNext(): Promise<boolean> {
    this.peeked ??= await this.pull();
    return this.peeked !== undefined;
  }

  // Up to `max` documents (all that remain when max is 0), and whether the cursor has more after them.
  async nextBatch(max: number): Promise<{ docs: Doc[]; more: boolean }> {
    const docs: Doc[] = [];
    while (max === 0 || docs.length < max) {
      const doc = await this.next();
      if (doc === undefined) return { docs, more: false };
      docs.push(doc);
    }
    return { docs, more: await this.hasNext() };
  }

  // Idempotent. The merged stream is ended first (which stops its shard streams), then the
  // shard cursors are released.
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.peeked = undefined;
    try {
      if (!this.exhausted) await this.iterator.return?.();
    } finally {
      await this.closeShards();
    }
  }

  private async pull(): Promise<Doc | undefined> {
    if (this.closed || this.exhausted) return undefined;
    assert(!this.busy, 'a cluster cursor is used by one caller at a time');
    this.busy = true;
    try {
      const r = await this.iterator.next();
      if (r.done === true) this.exhausted = true;
      return r.done === true ? undefined : r.value;
    } catch (err) {
      this.exhausted = true;
      await this.close();
      throw err;
    } finally {
      this.busy = false;
    }
  }
}
