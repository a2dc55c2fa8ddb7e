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
  // Keyed by the id's bytes as a latin1 string; lastUse in ms since the epoch. Every command with
  // an lsid passes here, so a known session is updated in place.
  private readonly sessions = new Map<string, { id: Binary; lastUse: number }>();

  touch(lsid: unknown, nowMs: number): void {
    if (!isPlainObject(lsid) || bsonTag(lsid.id) !== 'Binary') return;
    const id = lsid.id as Binary;
    const key = sessionKey(id);
    const known = this.sessions.get(key);
    if (known !== undefined) known.lastUse = nowMs;
    else this.sessions.set(key, { id, lastUse: nowMs });
  }

  end(lsids: unknown[]): void {
    for (const lsid of lsids) {
      if (isPlainObject(lsid) && bsonTag(lsid.id) === 'Binary') this.sessions.delete(sessionKey(lsid.id as Binary));
    }
  }

  // $listLocalSessions output, in MongoDB's shape.
  list(now: Date): Doc[] {
    const out: Doc[] = [];
    for (const [key, s] of this.sessions) {
      if (now.getTime() - s.lastUse > SESSION_TIMEOUT_MS) {
        this.sessions.delete(key);
        continue;
      }
      out.push({ _id: { id: s.id, uid: ANONYMOUS_UID }, lastUse: new Date(s.lastUse) });
    }
    return out;
  }

  get size(): number {
    return this.sessions.size;
  }
}

function sessionKey(id: Binary): string {
  const bytes = id.buffer;
  return Buffer.from(bytes.buffer, bytes.byteOffset, id.position).toString('latin1');
}
