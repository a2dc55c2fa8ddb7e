import type { Binary } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { LOGICAL_SESSION_TIMEOUT_MINUTES, lsidDoc, sessionKey, type LogicalSessionId } from './session_id.js';
import type { Clock } from '../base/clock.js';

// config.system.sessions: one record per live session, `{_id: {id, uid}, lastUse}`, whose TTL
// index removes a session LOGICAL_SESSION_TIMEOUT_MINUTES after its last use. It lives on the
// config server; a standalone node keeps its own.
export const SESSIONS_NS = 'config.system.sessions';
export const SESSIONS_TTL_INDEX: Doc = { v: 2, key: { lastUse: 1 }, name: 'lsidTTLIndex', expireAfterSeconds: LOGICAL_SESSION_TIMEOUT_MINUTES * 60 };

// MongoDB's SessionsCollection: what a LogicalSessionCache asks of config.system.sessions.
export interface SessionsCollection {
  // Upserts each session's record with lastUse set to the time of the write.
  refreshSessions(lsids: readonly LogicalSessionId[]): Promise<void>;
  removeRecords(lsids: readonly LogicalSessionId[]): Promise<void>;
  // The sessions among `lsids` that have no record (expired, ended, or never written).
  findRemovedSessions(lsids: readonly LogicalSessionId[]): Promise<LogicalSessionId[]>;
}

// The collection on the node that holds it (MongoDB's SessionsCollectionConfigServer and
// SessionsCollectionStandalone): created with its TTL index when first needed, written locally.
export class LocalSessionsCollection implements SessionsCollection {
  private readonly local: LocalCollections;

  // `clock`: the time a refresh writes as lastUse.
  constructor(private readonly storage: StorageEngine, private readonly clock: Clock) {
    this.local = new LocalCollections(storage);
  }

  // The collection's UUID, created with its TTL index when missing.
  setup(): Binary {
    const { coll } = this.storage.ensureCollection(SESSIONS_NS);
    if (coll.index(String(SESSIONS_TTL_INDEX.name)) === undefined) this.storage.createIndexes(coll, [SESSIONS_TTL_INDEX]);
    return coll.entry.uuid;
  }

  refreshSessions(lsids: readonly LogicalSessionId[]): Promise<void> {
    if (lsids.length === 0) return Promise.resolve();
    this.setup();
    const lastUse = new Date(this.clock.now());
    this.local.write((w) => {
      for (const lsid of lsids) w.update(SESSIONS_NS, { _id: lsidDoc(lsid) }, { $set: { lastUse } }, { upsert: true });
    });
    return Promise.resolve();
  }

  removeRecords(lsids: readonly LogicalSessionId[]): Promise<void> {
    if (lsids.length > 0 && this.storage.getCollection(SESSIONS_NS) !== undefined) {
      this.local.write((w) => w.delete(SESSIONS_NS, { _id: { $in: lsids.map(lsidDoc) } }));
    }
    return Promise.resolve();
  }

  findRemovedSessions(lsids: readonly LogicalSessionId[]): Promise<LogicalSessionId[]> {
    const found = this.local.find(SESSIONS_NS, { _id: { $in: lsids.map(lsidDoc) } });
    return Promise.resolve(removedAmong(lsids, found.map((d) => d._id)));
  }
}

// The sessions of `lsids` whose `_id` is not among those found.
export function removedAmong(lsids: readonly LogicalSessionId[], foundIds: readonly unknown[]): LogicalSessionId[] {
  const found = new Set<string>();
  for (const id of foundIds) {
    if (isPlainObject(id) && id.id !== undefined && id.uid !== undefined) found.add(sessionKey(id as unknown as LogicalSessionId));
  }
  return lsids.filter((lsid) => !found.has(sessionKey(lsid)));
}
