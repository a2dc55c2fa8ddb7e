import { errorReply } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { MONGOS_CURSOR_SESSION_CODES } from '../sessions/cursor_session.js';
import { runInSession } from '../sessions/session_operation.js';
import type { RouterServices } from './router_services.js';

// A routed command under its session (sessions/session_operation.ts) with mongos's getMore codes;
// an interrupted getMore answers Interrupted as the router's other errors are answered, as a reply.
export function runInRouterSession(router: RouterServices, name: string, cmd: Doc, run: () => Doc | Promise<Doc>): Doc | Promise<Doc> {
  const reply = runInSession(router.sessionKiller, router.cursors, MONGOS_CURSOR_SESSION_CODES, name, cmd, run);
  return reply instanceof Promise ? reply.catch(errorReply) : reply;
}
