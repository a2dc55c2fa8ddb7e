import { MaxKey, MinKey, type Binary } from 'bson';
import { isPlainObject } from '../bson/values.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { IMAGE_COLLECTION_NS, TRANSACTION_HISTORY_NS, TRANSACTIONS_NS, type SessionCatalog } from './session_catalog.js';
import { lsidDoc, type LogicalSessionId } from './session_id.js';
import type { SessionsCollection } from './sessions_collection.js';

// MongoDB's TransactionRecordMinimumLifetimeMinutes: a session's retryable-write records are kept
// at least this long after its last write, whatever config.system.sessions says, which bounds how
// late a retry may come from a router that stalled.
export const TRANSACTION_RECORD_MINIMUM_LIFETIME_MS = 30 * 60 * 1000;

// MongoDB's batch of sessions looked up and removed at a time.
const REAP_BATCH = 1000;

// MongoDB's reapSessionsOlderThan (session_catalog_mongod.cpp): the retryable-write records of a
// session (config.transactions, docshard's config.transaction_history, config.image_collection)
// are removed, with what memory holds of them, once its last write is older than
// `possiblyExpired` and the session is gone from config.system.sessions (expired or ended), unless
// it is in use here (`inUse`). A write of the session between the look-up and the removal keeps
// them: the removal rechecks lastWriteDate in its write unit. Returns the sessions removed.
export async function reapSessionsOlderThan(storage: StorageEngine, catalog: SessionCatalog, sessions: SessionsCollection, possiblyExpired: Date, inUse: (lsid: LogicalSessionId) => boolean): Promise<number> {
  if (storage.getCollection(TRANSACTIONS_NS) === undefined) return 0;
  const local = new LocalCollections(storage);
  const candidates = local.find(TRANSACTIONS_NS, { lastWriteDate: { $lt: possiblyExpired } }, { sort: { _id: 1 } })
    .map((record) => sessionIdOfRecord(record._id))
    .filter((lsid): lsid is LogicalSessionId => lsid !== undefined && !inUse(lsid));
  let reaped = 0;
  for (let i = 0; i < candidates.length; i += REAP_BATCH) {
    const gone = await sessions.findRemovedSessions(candidates.slice(i, i + REAP_BATCH));
    reaped += local.write((w) => {
      let n = 0;
      for (const lsid of gone) {
        const session = lsidDoc(lsid);
        if (w.delete(TRANSACTIONS_NS, { _id: session, lastWriteDate: { $lt: possiblyExpired } }) === 0) continue;
        w.delete(TRANSACTION_HISTORY_NS, { _id: { $gte: { lsid: session, txnNum: new MinKey() }, $lt: { lsid: session, txnNum: new MaxKey() } } });
        w.delete(IMAGE_COLLECTION_NS, { _id: session });
        catalog.forget(lsid);
        n += 1;
      }
      return n;
    });
  }
  return reaped;
}

function sessionIdOfRecord(id: unknown): LogicalSessionId | undefined {
  return isPlainObject(id) && id.id !== undefined && id.uid !== undefined ? { id: id.id as Binary, uid: id.uid as Binary } : undefined;
}

