import type { Binary } from 'bson';
import { bsonTag, isPlainObject, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { lsidDoc, sameBinary, sameSession, sessionIdFromClient, type LogicalSessionId } from './session_id.js';

// MongoDB's KillAllSessionsByPattern (kill_sessions.idl): one session (`lsid`), every session of a
// user (`uid`), or, with neither, every session. `users` and `roles` are the impersonation data a
// router passes on with the pattern; without authentication they are empty and change nothing.
export interface KillAllSessionsByPattern {
  readonly lsid?: LogicalSessionId;
  readonly uid?: Binary;
  readonly users?: readonly Doc[];
  readonly roles?: readonly Doc[];
}

// The pattern of "every session of the logged-in user": every session, without authentication.
export const KILL_ALL: KillAllSessionsByPattern = { users: [], roles: [] };

// Which sessions a set of patterns kills (MongoDB's SessionKiller::Matcher): a pattern with a uid
// matches that user's sessions, one with an lsid that session, and one with neither every session.
export class SessionKillerMatcher {
  private readonly killAll: boolean;

  constructor(readonly patterns: readonly KillAllSessionsByPattern[]) {
    this.killAll = patterns.some((p) => p.uid === undefined && p.lsid === undefined);
  }

  match(lsid: LogicalSessionId): boolean {
    if (this.killAll) return true;
    return this.patterns.some((p) => (p.uid !== undefined ? sameBinary(p.uid, lsid.uid) : sameSession(p.lsid!, lsid)));
  }
}

// The patterns as killAllSessionsByPattern carries them, which is how a router sends the shards
// what its clients asked to kill.
export function patternToBSON(p: KillAllSessionsByPattern): Doc {
  const out: Doc = {};
  if (p.lsid !== undefined) out.lsid = lsidDoc(p.lsid);
  if (p.uid !== undefined) out.uid = p.uid;
  if (p.users !== undefined) out.users = [...p.users];
  if (p.roles !== undefined) out.roles = [...p.roles];
  return out;
}

// One element of killAllSessionsByPattern, checked as its IDL struct (strict: no other field).
export function patternFromBSON(value: unknown, field: string): KillAllSessionsByPattern {
  if (!isPlainObject(value)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected type 'object'`);
  const { lsid, uid, users, roles, ...others } = value;
  const unknown = Object.keys(others)[0];
  if (unknown !== undefined) throw new MongoError(40415, `BSON field '${field}.${unknown}' is an unknown field.`);
  const pattern: { -readonly [K in keyof KillAllSessionsByPattern]: KillAllSessionsByPattern[K] } = {};
  if (lsid !== undefined) pattern.lsid = sessionIdFromClient(lsid, `${field}.lsid`);
  if (uid !== undefined) {
    if (bsonTag(uid) !== 'Binary' || (uid as Binary).position !== 32) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}.uid' is the wrong type, expected a SHA-256 digest`);
    pattern.uid = uid as Binary;
  }
  if (users !== undefined) pattern.users = docArray(users, `${field}.users`);
  if (roles !== undefined) pattern.roles = docArray(roles, `${field}.roles`);
  return pattern;
}

function docArray(value: unknown, field: string): Doc[] {
  if (!Array.isArray(value) || !value.every(isPlainObject)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected type 'array' of objects`);
  return value;
}
