import { createHash } from 'node:crypto';
import { Binary } from 'bson';
import { bsonTag, isPlainObject, type Doc } from '../bson/values.js';

const SESSION_TIMEOUT_MS = 30 * 60 * 1000;
// Without authentication every session belongs to the same (empty) user; MongoDB's uid is the
// SHA-256 of the user name.
const ANONYMOUS_UID = new Binary(createHash('sha256').update('').digest(), 0);

// The sessions this node has seen (MongoDB's LogicalSessionCache, local part): refreshed by every
// command carrying an lsid, dropped by endSessions or after the timeout.
export class LogicalSessionCache {
  private readonly sessions = new Map<string, { id: Binary; lastUse: Date }>();

  touch(lsid: unknown, now: Date): void {
    if (!isPlainObject(lsid) || bsonTag(lsid.id) !== 'Binary') return;
    const id = lsid.id as Binary;
    this.sessions.set(Buffer.from(id.buffer).toString('hex'), { id, lastUse: now });
  }

  end(lsids: unknown[]): void {
    for (const lsid of lsids) {
      if (isPlainObject(lsid) && bsonTag(lsid.id) === 'Binary') this.sessions.delete(Buffer.from((lsid.id as Binary).buffer).toString('hex'));
    }
  }

  // $listLocalSessions output, in MongoDB's shape.
  list(now: Date): Doc[] {
    const out: Doc[] = [];
    for (const [key, s] of this.sessions) {
      if (now.getTime() - s.lastUse.getTime() > SESSION_TIMEOUT_MS) {
        this.sessions.delete(key);
        continue;
      }
      out.push({ _id: { id: s.id, uid: ANONYMOUS_UID }, lastUse: s.lastUse });
    }
    return out;
  }

  get size(): number {
    return this.sessions.size;
  }
}
