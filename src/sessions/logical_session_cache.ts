import { UUID } from 'bson';
import { bsonTag, deserializeDocument, isPlainObject, type Doc } from '../bson/values.js';
import { SessionKillerMatcher, type KillAllSessionsByPattern } from './kill_sessions.js';
import { ANONYMOUS_UID, lsidDoc, sameSession, sessionKey, type LogicalSessionId } from './session_id.js';
import type { SessionsCollection } from './sessions_collection.js';

// What the cache needs of the process it runs in (MongoDB's ServiceLiaison): the sessions of its
// open cursors and of its operations in progress, and a way to close the cursors of sessions.
export interface ServiceLiaison {
  openCursorSessions(): LogicalSessionId[];
  activeOpSessions(): LogicalSessionId[];
  killCursorsWithMatchingSessions(matcher: SessionKillerMatcher): number | Promise<number>;
}

interface Record {
  lsid: LogicalSessionId;
  lastUse: number;
}

// What one refresh did, for the log.
export interface RefreshResult {
  refreshed: number;
  ended: number;
  cursorsClosed: number;
}

// The sessions this process has used since its last refresh (MongoDB's LogicalSessionCache):
// every command with an lsid vivifies its session here, endSessions marks sessions ending. A
// refresh (every logicalSessionRefreshMillis) writes their use to config.system.sessions, removes
// the ending ones from it, and closes the cursors of sessions that are no longer there (expired by
// its TTL index, or ended), so a session's cursors live as long as the session.
export class LogicalSessionCache {
  // Keyed by the id's bytes as a latin1 string: every session has the anonymous uid without
  // authentication, and the router's fast paths find a known session from its bytes.
  private active = new Map<string, Record>();
  private ending = new Map<string, LogicalSessionId>();

  touch(lsid: unknown, nowMs: number): void {
    if (!isPlainObject(lsid) || bsonTag(lsid.id) !== 'Binary') return;
    this.vivify({ id: lsid.id as LogicalSessionId['id'], uid: ANONYMOUS_UID }, nowMs);
  }

  // touch of an lsid still in its bytes (a document): a known session is found by its id's bytes
  // without decoding the lsid; an unknown one is decoded and added.
  touchBytes(lsid: Buffer, nowMs: number): void {
    const id = binaryIdData(lsid);
    const known = id === undefined ? undefined : this.active.get(id.toString('latin1'));
    if (known !== undefined) known.lastUse = nowMs;
    else this.touch(deserializeDocument(lsid), nowMs);
  }

  vivify(lsid: LogicalSessionId, nowMs: number): void {
    const key = idKey(lsid);
    const known = this.active.get(key);
    if (known !== undefined) known.lastUse = nowMs;
    else this.active.set(key, { lsid, lastUse: nowMs });
  }

  // startSession: a new session of the (anonymous) user, in use from now.
  startSession(nowMs: number): LogicalSessionId {
    const lsid = { id: new UUID(), uid: ANONYMOUS_UID };
    this.vivify(lsid, nowMs);
    return lsid;
  }

  // endSessions: the next refresh removes them from config.system.sessions and closes their cursors.
  end(lsids: readonly LogicalSessionId[]): void {
    for (const lsid of lsids) this.ending.set(sessionKey(lsid), lsid);
  }

  isActive(lsid: LogicalSessionId): boolean {
    return this.active.has(idKey(lsid));
  }

  // $listLocalSessions: the sessions used since the last refresh, in MongoDB's shape.
  list(): Doc[] {
    return [...this.active.values()].map((r) => ({ _id: lsidDoc(r.lsid), lastUse: new Date(r.lastUse) }));
  }

  get size(): number {
    return this.active.size;
  }

  // MongoDB's LogicalSessionCacheImpl::_refresh. The sessions used since the last refresh and those
  // of operations in progress get a new lastUse; ending ones are removed; then the cursors of
  // ending sessions and of sessions gone from the collection are closed, unless used again
  // meanwhile. A failed write puts what it took back for the next refresh and closes nothing.
  async refresh(collection: SessionsCollection, service: ServiceLiaison): Promise<RefreshResult> {
    const ending = this.ending;
    const active = this.active;
    this.ending = new Map();
    this.active = new Map();
    for (const lsid of ending.values()) {
      const record = active.get(idKey(lsid));
      if (record !== undefined && sameSession(record.lsid, lsid)) active.delete(idKey(lsid));
    }
    const toRefresh = new Map([...active.values()].map((r) => [sessionKey(r.lsid), r.lsid]));
    for (const lsid of service.activeOpSessions()) if (!ending.has(sessionKey(lsid))) toRefresh.set(sessionKey(lsid), lsid);
    try {
      await collection.refreshSessions([...toRefresh.values()]);
    } catch (err) {
      this.putBack(active, ending);
      throw err;
    }
    try {
      await collection.removeRecords([...ending.values()]);
    } catch (err) {
      this.putBack(new Map(), ending);
      throw err;
    }
    // A session used since the swap is alive whatever the collection says.
    const cursorSessions = dedupe(service.openCursorSessions().filter((lsid) => !this.active.has(idKey(lsid))));
    const removed = cursorSessions.length === 0 ? [] : await collection.findRemovedSessions(cursorSessions).catch(() => []);
    const patterns: KillAllSessionsByPattern[] = [...removed, ...ending.values()].map((lsid) => ({ lsid, users: [], roles: [] }));
    const cursorsClosed = patterns.length === 0 ? 0 : await service.killCursorsWithMatchingSessions(new SessionKillerMatcher(patterns));
    return { refreshed: toRefresh.size, ended: ending.size, cursorsClosed };
  }

  private putBack(active: Map<string, Record>, ending: Map<string, LogicalSessionId>): void {
    for (const [key, record] of active) if (!this.active.has(key)) this.active.set(key, record);
    for (const [key, lsid] of ending) this.ending.set(key, lsid);
  }
}

function dedupe(lsids: LogicalSessionId[]): LogicalSessionId[] {
  return [...new Map(lsids.map((lsid) => [sessionKey(lsid), lsid])).values()];
}

function idKey(lsid: LogicalSessionId): string {
  const id = lsid.id;
  return Buffer.from(id.buffer.buffer, id.buffer.byteOffset, id.position).toString('latin1');
}

const ID_ELEMENT = Buffer.from('\x05id\0', 'latin1');

// The data of the lsid's `id` when it is its first element and a binary value, as idKey reads it.
function binaryIdData(lsid: Buffer): Buffer | undefined {
  if (lsid.length < 4 + ID_ELEMENT.length + 5 + 1 || lsid.compare(ID_ELEMENT, 0, ID_ELEMENT.length, 4, 4 + ID_ELEMENT.length) !== 0) return undefined;
  const at = 4 + ID_ELEMENT.length;
  const size = lsid.readInt32LE(at);
  if (size < 0 || at + 5 + size > lsid.length - 1) return undefined;
  return lsid.subarray(at + 5, at + 5 + size);
}
