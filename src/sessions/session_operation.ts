import { Long } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import { checkCursorSession, type CursorSessionCodes } from './cursor_session.js';
import type { SessionKiller } from './session_killer.js';
import { sessionIdOf, type LogicalSessionId } from './session_id.js';

// What a process's cursors tell about sessions: a cursor belongs to the session of the command
// that opened it.
export interface SessionCursors {
  // The session of an open cursor: undefined when there is no such cursor, null when it was
  // opened without a session.
  sessionOf(id: Long): LogicalSessionId | null | undefined;
  attachSession(id: Long, lsid: LogicalSessionId): void;
}

// Commands that leave their own lsid aside (MongoDB's attachLogicalSessionsToOpCtx false), so
// that killing sessions never interrupts itself.
const OWN_SESSION_IGNORED = new Set(['killSessions', 'killAllSessions', 'killAllSessionsByPattern']);

export type Interruptible = <T>(wait: Promise<T>) => Promise<T>;

const uninterruptible: Interruptible = (wait) => wait;

// Runs a command under its session, for the dispatchers of nodes and routers: a getMore in a
// session other than its cursor's is refused before it reads; the command is registered with the
// session killer while it runs (`run` hands its waits to `interruptible`, and a getMore that waits
// for data is interrupted as a whole: it has changed nothing); a cursor it opens belongs to its
// session. The client learns a new cursor's id only from this reply, so no getMore can come
// before the session is attached to it.
export function runInSession(killer: SessionKiller, cursors: SessionCursors, codes: CursorSessionCodes, name: string, cmd: Doc, run: (interruptible: Interruptible) => Doc | Promise<Doc>): Doc | Promise<Doc> {
  const lsid = cmd.lsid === undefined || OWN_SESSION_IGNORED.has(name) ? undefined : sessionIdOf(cmd.lsid);
  const getMore = name === 'getMore' && cmd.getMore instanceof Long ? cmd.getMore : undefined;
  if (getMore !== undefined) {
    const owner = cursors.sessionOf(getMore);
    if (owner !== undefined) checkCursorSession(getMore, owner ?? undefined, lsid, codes);
  }
  if (lsid === undefined) return run(uninterruptible);
  const op = killer.begin(lsid);
  let reply: Doc | Promise<Doc>;
  try {
    reply = run((wait) => op.interruptible(wait));
  } catch (err) {
    op.end();
    throw err;
  }
  if (!(reply instanceof Promise)) {
    op.end();
    return attach(cursors, getMore, lsid, reply);
  }
  return (getMore !== undefined ? op.interruptible(reply) : reply).then(
    (r) => { op.end(); return attach(cursors, getMore, lsid, r); },
    (err: unknown) => { op.end(); throw err; },
  );
}

function attach(cursors: SessionCursors, getMore: Long | undefined, lsid: LogicalSessionId, reply: Doc): Doc {
  const cursor = reply.cursor;
  if (getMore === undefined && isPlainObject(cursor) && cursor.id instanceof Long && !cursor.id.isZero()) cursors.attachSession(cursor.id, lsid);
  return reply;
}
