import { assert } from '../base/errors.js';
import { FAIL_COMMAND } from '../command_layer/fail_command_policy.js';
import { opMsgReply, type MessageHandler } from '../command_layer/message_handler.js';
import { writeTimestamp } from '../sessions/logical_time_metadata.js';
import { enterCommand, withRouterTimes } from './command_entry.js';
import { answerFind, findFailed, planFind } from './find_fast_path.js';
import { answerInsert, insertFailed, planInsert } from './insert_fast_path.js';
import { answerUpdate, planUpdate, updateFailed } from './update_fast_path.js';
import type { CachedRouting } from './routed_command.js';
import { routerErrorReply } from './router_dispatcher.js';
import type { RouterServices } from './router_services.js';
import type { ConnectionInfo } from '../command_layer/connection_info.js';
import { checkAuthorization } from '../auth/authorization_policy.js';

// The router's message handler with the fast paths in front of `general` (the message handler and
// the dispatcher): a message the planners (insert_fast_path.ts, update_fast_path.ts, find_fast_path.ts) plan onto one
// shard whose host is cached goes through the command entry every command passes
// (command_entry.ts), then to that shard as bytes, and the shard's reply back. Anything a planner
// declines, and any answer it leaves to the general path (a stale shard, a view), is `general`'s.
// With the routing and the host cached the whole path is promise chains: no async function
// between the client's bytes and the shard's.
export function withFastPaths(router: RouterServices, general: MessageHandler): MessageHandler {
  const caches: CachedRouting = {
    // A collection whose queries are being sampled takes the general path, which samples them.
    routing: (ns) => (router.queryAnalysis.isSampled(ns) ? undefined : router.catalogCache.peekRouting(ns)),
    isView: (ns) => router.knownViews.has(ns),
  };
  return (conn, message) => {
    // Under the failCommand fail point every command goes through the dispatcher, which applies it.
    if (router.failPoints.isEnabled(FAIL_COMMAND)) return general(conn, message);
    const insert = planInsert(message, caches);
    const update = insert === undefined ? planUpdate(message, caches) : undefined;
    const plan = insert ?? update ?? planFind(message, caches);
    const host = plan === undefined ? undefined : router.shardRegistry.cachedHost(plan.shard);
    if (plan === undefined || host === undefined) return general(conn, message);
    const name = insert !== undefined ? 'insert' : update !== undefined ? 'update' : 'find';
    // With --auth, a command its user may not run takes the general path, which refuses it.
    if (router.options.auth && !mayRun(router, conn, name, plan.ns)) return general(conn, message);
    try {
      // The planners' shapes hold no maxTimeMS: a command with one is the general path's.
      assert(enterCommand(router, name, plan.generic) === undefined, 'a fast path planned a command with a maxTimeMS');
    } catch (err) {
      return opMsgReply(withRouterTimes(router, routerErrorReply(router, err)), plan.requestId);
    }
    // The router's time once the client's $clusterTime has moved it: the shard's writes then come
    // after everything the client has seen.
    writeTimestamp(plan.request, plan.clusterTimeAt, router.clock.now());
    const sent = router.client.forwardMessage(host, plan.request);
    if (insert !== undefined) return sent.then((reply) => answerInsert(router, insert, reply) ?? general(conn, message), (err: unknown) => insertFailed(router, insert, err));
    if (update !== undefined) return sent.then((reply) => answerUpdate(router, update, reply) ?? general(conn, message), (err: unknown) => updateFailed(router, update, err));
    return sent.then((reply) => answerFind(router, plan, reply) ?? general(conn, message), (err: unknown) => findFailed(router, plan, err));
  };
}

// Roles read under an older user cache generation are the general path's to read again.
function mayRun(router: RouterServices, conn: ConnectionInfo, name: 'insert' | 'update' | 'find', ns: string): boolean {
  const user = conn.auth?.user;
  if (user === undefined || user.generation !== router.userCache.generation) return false;
  const dot = ns.indexOf('.');
  return checkAuthorization(user, name, ns.slice(0, dot), { [name]: ns.slice(dot + 1) }) === undefined;
}
