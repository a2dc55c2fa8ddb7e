import type { Doc } from '../bson/values.js';
import { checkOk } from '../wire/remote_cursor.js';
import type { Network } from '../wire/network.js';
import { MongoError } from '../base/errors.js';
import { lsidDoc, type LogicalSessionId } from './session_id.js';
import { removedAmong, type SessionsCollection } from './sessions_collection.js';

// MongoDB's sessionMaxBatchSize: sessions per command, so no request nears 16 MB.
const SESSION_MAX_BATCH_SIZE = 1000;
// MongoDB's sessionWriteConcernTimeoutSystemMillis.
const WRITE_CONCERN = { w: 'majority', wtimeout: 60_000 };

// config.system.sessions seen from a router or a shard (MongoDB's SessionsCollectionSharded): its
// one chunk is on the config server, so every command goes there, with MongoDB's shapes: an
// unordered upsert setting lastUse to $$NOW, an unordered delete, a find of the _ids.
export class SessionsCollectionSharded implements SessionsCollection {
  constructor(private readonly network: Network, private readonly configHost: string) {}

  async refreshSessions(lsids: readonly LogicalSessionId[]): Promise<void> {
    for (const batch of batches(lsids)) {
      await this.write({
        update: 'system.sessions', ordered: false, writeConcern: WRITE_CONCERN,
        updates: batch.map((lsid) => ({ q: { _id: lsidDoc(lsid) }, u: [{ $set: { lastUse: '$$NOW' } }], upsert: true })),
      });
    }
  }

  async removeRecords(lsids: readonly LogicalSessionId[]): Promise<void> {
    for (const batch of batches(lsids)) {
      await this.write({
        delete: 'system.sessions', ordered: false, writeConcern: WRITE_CONCERN,
        deletes: batch.map((lsid) => ({ q: { _id: lsidDoc(lsid) }, limit: 1 })),
      });
    }
  }

  async findRemovedSessions(lsids: readonly LogicalSessionId[]): Promise<LogicalSessionId[]> {
    const removed: LogicalSessionId[] = [];
    for (const batch of batches(lsids)) {
      const reply = checkOk(await this.network.command(this.configHost, 'config', {
        find: 'system.sessions', filter: { _id: { $in: batch.map(lsidDoc) } }, projection: { _id: 1 },
        batchSize: batch.length, limit: batch.length, singleBatch: true, readConcern: { level: 'local' },
      }));
      const found = ((reply.cursor as Doc).firstBatch as Doc[]).map((d) => d._id);
      removed.push(...removedAmong(batch, found));
    }
    return removed;
  }

  private async write(cmd: Doc): Promise<void> {
    const reply = checkOk(await this.network.command(this.configHost, 'config', cmd));
    const [first] = (reply.writeErrors as Doc[] | undefined) ?? [];
    if (first !== undefined) throw new MongoError(Number(first.code), String(first.errmsg));
  }
}

function batches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += SESSION_MAX_BATCH_SIZE) out.push(items.slice(i, i + SESSION_MAX_BATCH_SIZE));
  return out;
}
