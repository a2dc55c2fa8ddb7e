import { Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { mayKillAnyCursor, type Authorization } from './authorization_policy.js';
import { userId, type UserName } from './users.js';

// A cursor belongs to the user whose command opened it, as in MongoDB: only that user's getMores
// read it, and only that user, or one allowed killAnyCursor, kills it. Pure over what the
// process's cursor managers tell of their cursors.
export interface CursorOwners {
  // The user who opened a cursor: undefined when there is no such cursor, null when it was
  // opened without a login (a server without --auth, or before it was turned on).
  ownerOf(id: Long): { owner: string | null; ns: string } | undefined;
  attachOwner(id: Long, owner: string): void;
}

type User = UserName & Authorization;

// Before a getMore or a killCursors of a logged-in connection runs.
export function checkCursorOwner(cursors: CursorOwners, user: User, name: string, cmd: Doc): void {
  if (name === 'getMore' && cmd.getMore instanceof Long) {
    const cursor = cursors.ownerOf(cmd.getMore);
    if (cursor !== undefined && cursor.owner !== userId(user)) {
      throw new MongoError(ErrorCodes.Unauthorized, `cursor id ${cmd.getMore.toString()} was not created by the authenticated user`);
    }
  }
  if (name === 'killCursors' && Array.isArray(cmd.cursors) && !mayKillAnyCursor(user)) {
    for (const id of cmd.cursors) {
      const cursor = id instanceof Long ? cursors.ownerOf(id) : undefined;
      if (cursor !== undefined && cursor.owner !== userId(user)) throw new MongoError(ErrorCodes.Unauthorized, `not authorized to kill cursor on ${cursor.ns}`);
    }
  }
}

// After the command answered: the cursor it opened is its user's.
export function attachCursorOwner(cursors: CursorOwners, user: UserName | undefined, name: string, reply: Doc): Doc {
  const cursor = reply.cursor;
  if (user !== undefined && name !== 'getMore' && isPlainObject(cursor) && cursor.id instanceof Long && !cursor.id.isZero()) cursors.attachOwner(cursor.id, userId(user));
  return reply;
}
