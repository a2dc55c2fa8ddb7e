import { Long } from 'bson';
import type { Doc } from '../bson/values.js';
import { checkOk } from '../wire/remote_cursor.js';
import type { ForwardedCursor } from './cluster_cursor_manager.js';
import type { RouterServices } from './router_services.js';

// A tailable cursor through the router. Capped collections are never sharded, so it is the cursor
// of the one node that has the collection, and its getMores are that node's: the node keeps the
// position, waits for data (awaitData, up to the getMore's maxTimeMS) and says when the cursor
// dies (CappedPositionLost); the router relabels the batches with its own cursor id.
export class TailableClusterCursor implements ForwardedCursor {
  private id: Long;
  private readonly collection: string;

  constructor(private readonly router: RouterServices, private readonly host: string, private readonly db: string, firstReply: Doc, readonly awaitData: boolean) {
    const cursor = firstReply.cursor as Doc;
    this.id = cursor.id as Long;
    this.collection = String(cursor.ns).slice(db.length + 1);
  }

  async getMore(batchSize: number | undefined, maxTimeMS: number | undefined): Promise<{ docs: Doc[]; exhausted: boolean }> {
    const cmd: Doc = { getMore: this.id, collection: this.collection };
    if (batchSize !== undefined && batchSize > 0) cmd.batchSize = batchSize;
    if (maxTimeMS !== undefined) cmd.maxTimeMS = maxTimeMS;
    const cursor = checkOk(await this.router.client.command(this.host, this.db, cmd)).cursor as Doc;
    this.id = cursor.id as Long;
    return { docs: cursor.nextBatch as Doc[], exhausted: this.id.isZero() };
  }

  async close(): Promise<void> {
    if (this.id.isZero()) return;
    const id = this.id;
    this.id = Long.ZERO;
    await this.router.client.command(this.host, this.db, { killCursors: this.collection, cursors: [id] }).catch(() => undefined);
  }
}
