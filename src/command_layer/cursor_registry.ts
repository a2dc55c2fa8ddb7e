import type { Long } from 'bson';
import type { SessionKillerMatcher } from '../sessions/kill_sessions.js';
import type { LogicalSessionId } from '../sessions/session_id.js';
import type { SessionCursors } from '../sessions/session_operation.js';
import type { CursorOwners } from '../auth/cursor_owner.js';
import { newCursorId } from './cursor_batch.js';

// What every open cursor carries, a node's (cursor_manager.ts) and a router's
// (router/cluster_cursor_manager.ts) alike.
export interface RegisteredCursor {
  // Given by the registry when the cursor is registered.
  id: Long;
  readonly ns: string;
  // The session of the command that opened it: only its getMores may read it, and it is closed
  // with the session.
  lsid?: LogicalSessionId | undefined;
  // The user whose command opened it ("db.user"), with --auth: only that user's getMores read it.
  owner?: string | undefined;
}

// The open cursors of a process by id, and their session and owner bookkeeping; what a cursor
// reads and how it is closed are its manager's.
export class CursorRegistry<C extends RegisteredCursor> implements SessionCursors, CursorOwners {
  private readonly open = new Map<string, C>();

  get openCount(): number {
    return this.open.size;
  }

  // Gives the cursor an id no open cursor has, and keeps it under it.
  protected register(cursor: C): Long {
    cursor.id = newCursorId((key) => this.open.has(key));
    this.open.set(cursor.id.toString(), cursor);
    return cursor.id;
  }

  protected cursor(id: Long): C | undefined {
    return this.open.get(id.toString());
  }

  protected unregister(id: Long): void {
    this.open.delete(id.toString());
  }

  // The open cursors as they are now: their managers close some while going through them.
  protected openCursors(): C[] {
    return [...this.open.values()];
  }

  protected withMatchingSessions(matcher: SessionKillerMatcher): C[] {
    return this.openCursors().filter((cursor) => cursor.lsid !== undefined && matcher.match(cursor.lsid));
  }

  sessionOf(id: Long): LogicalSessionId | null | undefined {
    const cursor = this.cursor(id);
    return cursor === undefined ? undefined : cursor.lsid ?? null;
  }

  attachSession(id: Long, lsid: LogicalSessionId): void {
    const cursor = this.cursor(id);
    if (cursor !== undefined) cursor.lsid = lsid;
  }

  ownerOf(id: Long): { owner: string | null; ns: string } | undefined {
    const cursor = this.cursor(id);
    return cursor === undefined ? undefined : { owner: cursor.owner ?? null, ns: cursor.ns };
  }

  attachOwner(id: Long, owner: string): void {
    const cursor = this.cursor(id);
    if (cursor !== undefined) cursor.owner = owner;
  }

  // The sessions that have open cursors (MongoDB's appendActiveSessions).
  sessions(): LogicalSessionId[] {
    const out: LogicalSessionId[] = [];
    for (const cursor of this.open.values()) if (cursor.lsid !== undefined) out.push(cursor.lsid);
    return out;
  }
}
