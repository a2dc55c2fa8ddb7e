import { createHash } from 'node:crypto';
import { Binary } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { bsonTag, isPlainObject, type Doc } from '../bson/values.js';

// A logical session id as the server keeps it: the client's `id` (a UUID) and the `uid` the server
// adds, the SHA-256 of the authenticated user's name. Without authentication every session
// belongs to the same (empty) user.
export interface LogicalSessionId {
  readonly id: Binary;
  readonly uid: Binary;
}

export const ANONYMOUS_UID = new Binary(createHash('sha256').update('').digest(), 0);

// MongoDB's localLogicalSessionTimeoutMinutes: how long a session lives after its last use. hello
// and startSession announce it, and config.system.sessions' TTL index expires records after it.
export const LOGICAL_SESSION_TIMEOUT_MINUTES = 30;

// The lsid a command carries, checked as MongoDB's IDL checks it.
export function sessionIdOf(lsid: unknown): LogicalSessionId {
  if (!isPlainObject(lsid)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'lsid' is the wrong type, expected type 'object'");
  return { id: uuidOf(lsid.id, 'lsid.id'), uid: ANONYMOUS_UID };
}

// An lsid a command names as its argument (killSessions, endSessions: MongoDB's
// LogicalSessionFromClient). A client may give the uid, which MongoDB takes from a user allowed to
// impersonate, as everyone is without authentication. `field` names it in errors.
export function sessionIdFromClient(value: unknown, field: string): LogicalSessionId {
  if (!isPlainObject(value)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected type 'object'`);
  const { id, uid, ...others } = value;
  const unknown = Object.keys(others)[0];
  if (unknown !== undefined) throw new MongoError(40415, `BSON field '${field}.${unknown}' is an unknown field.`);
  if (uid === undefined) return { id: uuidOf(id, `${field}.id`), uid: ANONYMOUS_UID };
  if (bsonTag(uid) !== 'Binary' || (uid as Binary).sub_type !== 0 || (uid as Binary).position !== 32) {
    throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}.uid' is the wrong type, expected a SHA-256 digest (32 bytes of binData subtype 0)`);
  }
  return { id: uuidOf(id, `${field}.id`), uid: uid as Binary };
}

function uuidOf(id: unknown, field: string): Binary {
  if (id === undefined) throw new MongoError(40414, `BSON field '${field}' is missing but a required field`);
  if (bsonTag(id) !== 'Binary' || (id as Binary).sub_type !== Binary.SUBTYPE_UUID) {
    throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected type 'uuid'`);
  }
  return id as Binary;
}

export function lsidDoc(lsid: LogicalSessionId): Doc {
  return { id: lsid.id, uid: lsid.uid };
}

// A map key for the session.
export function sessionKey(lsid: LogicalSessionId): string {
  return `${bytesOf(lsid.id).toString('hex')}-${bytesOf(lsid.uid).toString('hex')}`;
}

export function sameSession(a: LogicalSessionId, b: LogicalSessionId): boolean {
  return sameBinary(a.id, b.id) && sameBinary(a.uid, b.uid);
}

export function sameBinary(a: Binary, b: Binary): boolean {
  return bytesOf(a).equals(bytesOf(b));
}

// How MongoDB's messages name a session: "<id> - <uid> -  - ", the uid in base64 as MongoDB's
// SHA256Block prints itself.
export function describeSession(lsid: LogicalSessionId): string {
  const id = bytesOf(lsid.id).toString('hex');
  const uuid = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
  return `${uuid} - ${bytesOf(lsid.uid).toString('base64')} -  - `;
}

function bytesOf(b: Binary): Buffer {
  return Buffer.from(b.buffer.buffer, b.buffer.byteOffset, b.position);
}
