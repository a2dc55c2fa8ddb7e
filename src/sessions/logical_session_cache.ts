import { createHash } from 'node:crypto';
import { Binary } from 'bson';
import { bsonTag, deserializeDocument, isPlainObject, type Doc } from '../bson/values.js';

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

  // touch of an lsid still in its bytes (a document): a known session is found by its id's bytes
  // without decoding the lsid; an unknown one is decoded and added.
  touchBytes(lsid: Buffer, nowMs: number): void {
    const id = binaryIdData(lsid);
    const known = id === undefined ? undefined : this.sessions.get(id.toString('latin1'));
    if (known !== undefined) known.lastUse = nowMs;
    else this.touch(deserializeDocument(lsid), nowMs);
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

const ID_ELEMENT = Buffer.from('\x05id\0', 'latin1');

// The data of the lsid's `id` when it is its first element and a binary value, as sessionKey reads it.
function binaryIdData(lsid: Buffer): Buffer | undefined {
  if (lsid.length < 4 + ID_ELEMENT.length + 5 + 1 || lsid.compare(ID_ELEMENT, 0, ID_ELEMENT.length, 4, 4 + ID_ELEMENT.length) !== 0) return undefined;
  const at = 4 + ID_ELEMENT.length;
  const size = lsid.readInt32LE(at);
  if (size < 0 || at + 5 + size > lsid.length - 1) return undefined;
  return lsid.subarray(at + 5, at + 5 + size);
}

function sessionKey(id: Binary): string {
  const bytes = id.buffer;
  return Buffer.from(bytes.buffer, bytes.byteOffset, id.position).toString('latin1');
}
