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

// The lsid a command carries, checked as MongoDB's IDL checks it.
export function sessionIdOf(lsid: unknown): LogicalSessionId {
  if (!isPlainObject(lsid)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'lsid' is the wrong type, expected type 'object'");
  const id = lsid.id;
  if (bsonTag(id) !== 'Binary' || (id as Binary).sub_type !== Binary.SUBTYPE_UUID) {
    throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'lsid.id' is the wrong type, expected type 'uuid'");
  }
  return { id: id as Binary, uid: ANONYMOUS_UID };
}

export function lsidDoc(lsid: LogicalSessionId): Doc {
  return { id: lsid.id, uid: lsid.uid };
}

// A map key for the session.
export function sessionKey(lsid: LogicalSessionId): string {
  return `${Buffer.from(lsid.id.buffer.subarray(0, lsid.id.position)).toString('hex')}-${Buffer.from(lsid.uid.buffer.subarray(0, lsid.uid.position)).toString('hex')}`;
}

// How MongoDB's messages name a session: "<id> - <uid> -  - ".
export function describeSession(lsid: LogicalSessionId): string {
  const hex = (b: Binary) => Buffer.from(b.buffer.subarray(0, b.position)).toString('hex');
  const id = hex(lsid.id);
  const uuid = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
  return `${uuid} - ${hex(lsid.uid).toUpperCase()} -  - `;
}
