import type { Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { describeSession, sameSession, type LogicalSessionId } from './session_id.js';

// The codes of a getMore whose session is not its cursor's: a cursor opened in a session takes
// getMores in that session only, and one opened without a session takes them without one.
// mongod and mongos check alike under their own codes (getmore_cmd.cpp, cluster_find.cpp).
export interface CursorSessionCodes {
  readonly notCreatedInSession: number;
  readonly withoutLsid: number;
  readonly otherSession: number;
}

export const MONGOD_CURSOR_SESSION_CODES: CursorSessionCodes = { notCreatedInSession: 50736, withoutLsid: 50737, otherSession: 50738 };
export const MONGOS_CURSOR_SESSION_CODES: CursorSessionCodes = { notCreatedInSession: 50799, withoutLsid: 50800, otherSession: 50801 };

export function checkCursorSession(cursorId: Long, cursorLsid: LogicalSessionId | undefined, lsid: LogicalSessionId | undefined, codes: CursorSessionCodes): void {
  const id = cursorId.toString();
  if (lsid !== undefined && cursorLsid === undefined) {
    throw new MongoError(codes.notCreatedInSession, `Cannot run getMore on cursor ${id}, which was not created in a session, in session ${describeSession(lsid)}`);
  }
  if (lsid === undefined && cursorLsid !== undefined) {
    throw new MongoError(codes.withoutLsid, `Cannot run getMore on cursor ${id}, which was created in session ${describeSession(cursorLsid)}, without an lsid`);
  }
  if (lsid !== undefined && cursorLsid !== undefined && !sameSession(lsid, cursorLsid)) {
    throw new MongoError(codes.otherSession, `Cannot run getMore on cursor ${id}, which was created in session ${describeSession(cursorLsid)}, in session ${describeSession(lsid)}`);
  }
}
