import { errorReply, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { Timestamp } from 'bson';
import { commandName } from '../command_layer/args.js';
import type { ConnectionInfo } from '../command_layer/connection_info.js';
import type { RouterCommand, RouterContext, RouterServices } from './router_services.js';
import { runResolvedView } from './commands/cluster_views.js';
import { resolvedViewOf } from './resolved_view.js';
import { checkCommandFields } from '../command_layer/command_fields.js';
import { countCommand, countWriteReply, enterCommand, isWriteCommand, withRouterTimes, type WriteKind } from './command_entry.js';
import { takeUnsatisfiableWriteConcern, withWriteConcernError } from '../command_layer/unreplicated_write_concern.js';
import { beforeDeadline } from '../base/operation_deadline.js';
import { withFailCommand } from '../command_layer/fail_command.js';
import { runInRouterSession } from './cluster_session_operation.js';
import { isLoopback, requiresAuthentication } from '../auth/connection_auth.js';
import { checkAuthorization } from '../auth/authorization_policy.js';
import { refreshAuthenticatedUser } from './commands/cluster_auth.js';
import { checkCursorOwner } from '../auth/cursor_owner.js';
import { authorizedReply } from '../auth/authorized_reply.js';
import { withSnapshotTime } from '../command_layer/snapshot_read.js';
import { runRouterTransactionStatement } from './commands/cluster_transactions.js';
import { withSnapshotReadTime } from './transaction_router.js';
import { withOperationClock } from '../base/operation_clock.js';
import { sampleRoutedQuery } from './query_analysis/sample_query.js';

// The router's command entry: look-up, admin-only and argument checks, and errors shaped as mongos
// shapes them. Stale routing errors never reach here: the commands retry them
// (versioned_request.ts). Not async: a command's own promise is passed on with only a catch added
// (which also answers a read of a view by its resolution). Every reply, error or not, carries the
// router's cluster time (command_entry.ts's withRouterTimes).
export function dispatchRouterCommand(router: RouterServices, conn: ConnectionInfo, cmd: Doc): Doc | Promise<Doc> {
  const reply = routeCommand(router, conn, cmd);
  return reply instanceof Promise ? reply.then((r) => withRouterTimes(router, withSnapshotTime(cmd, r))) : withRouterTimes(router, withSnapshotTime(cmd, reply));
}

function routeCommand(router: RouterServices, conn: ConnectionInfo, cmd: Doc): Doc | Promise<Doc> {
  // Roles read under an older user cache generation are read again first.
  const user = router.options.auth ? conn.auth?.user : undefined;
  if (user !== undefined && user.generation !== router.userCache.generation) {
    return refreshAuthenticatedUser(router, conn).then(() => routeCommand(router, conn, cmd), (err: unknown) => routerErrorReply(router, err));
  }
  try {
    const db = cmd.$db;
    if (typeof db !== 'string') throw new MongoError(40571, 'OP_MSG requests require a $db argument');
    const name = commandName(cmd);
    const def = name === '' ? undefined : router.commands.get(name);
    if (!def) throw new MongoError(ErrorCodes.CommandNotFound, `no such command: '${name}'`);
    if (def.adminOnly && db !== 'admin') throw new MongoError(ErrorCodes.Unauthorized, `${def.names[0]} may only be run against the admin database.`);
    if (router.options.auth) checkAuthorized(router, conn, def.names[0]!, db, cmd);
    const owner = router.options.auth ? conn.auth?.user : undefined;
    // As mongos: the command's own fields (the same table as a node's), its session fields and
    // maxTimeMS (in the entry the fast paths share), then its write concern, which the shards are
    // sent as one they can satisfy: as it is when they are replica sets, else as one-member sets'.
    checkCommandFields(name, cmd);
    const deadline = enterCommand(router, name, cmd);
    const writeConcernError = router.shardRegistry.allReplicaSets() ? undefined : takeUnsatisfiableWriteConcern(cmd);
    countCommand(router.opcounters, name);
    sampleRoutedQuery(router, name, db, cmd);
    const failed = { db, name, names: def.names, cmd, router: true };
    const ran = withinMaxTime(router, deadline, withFailCommand(router.failPoints, router.wallClock, conn, failed, () => runInRouterSession(router, name, cmd, () => withOperationClock(router.wallClock, () => run(router, { router, conn, db }, name, def, cmd)))));
    const reply = owner === undefined ? ran : ran instanceof Promise ? ran.then((r) => authorizedReply(router.cursors, owner, name, cmd, r)) : authorizedReply(router.cursors, owner, name, cmd, ran);
    const write = isWriteCommand(name) ? name : undefined;
    if (writeConcernError === undefined && write === undefined) return reply;
    return reply instanceof Promise ? reply.then((r) => answered(router, write, cmd, r, writeConcernError)) : answered(router, write, cmd, reply, writeConcernError);
  } catch (err) {
    return routerErrorReply(router, err);
  }
}

// With --auth, as a node checks (src/mongod_commands/dispatcher.ts): before login only the handshake and
// authentication, and createUser from this host (the command itself checks that the config server
// holds no user yet: the localhost exception); after it, what the user's roles allow, by the
// command's canonical name.
function checkAuthorized(router: RouterServices, conn: ConnectionInfo, name: string, db: string, cmd: Doc): void {
  const user = conn.auth?.user;
  if (user !== undefined) {
    const refusal = checkAuthorization(user, name, db, cmd);
    if (refusal !== undefined) throw refusal;
    checkCursorOwner(router.cursors, user, name, cmd);
    return;
  }
  if (!requiresAuthentication(name) || (name === 'createUser' && isLoopback(conn.remote))) return;
  throw new MongoError(ErrorCodes.Unauthorized, `command ${name} requires authentication`);
}

// The reply as the client gets it: a write's statements counted, and the writeConcernError mongos
// adds when the write concern asked for replication.
function answered(router: RouterServices, write: WriteKind | undefined, cmd: Doc, reply: Doc, writeConcernError: Doc | undefined): Doc {
  if (write !== undefined) countWriteReply(router.opcounters, write, cmd, reply);
  return writeConcernError === undefined ? reply : withWriteConcernError(cmd, reply, writeConcernError);
}

function run(router: RouterServices, ctx: RouterContext, name: string, def: RouterCommand, cmd: Doc): Doc | Promise<Doc> {
  const inTransaction = cmd.autocommit === false && name !== 'commitTransaction' && name !== 'abortTransaction';
  const snapshotAt = snapshotReadTime(cmd);
  const reply = inTransaction
    ? runRouterTransactionStatement(ctx, name, cmd, () => def.run(ctx, cmd))
    : snapshotAt !== undefined ? withSnapshotReadTime(snapshotAt, () => def.run(ctx, cmd)) : def.run(ctx, cmd);
  if (!(reply instanceof Promise)) return reply;
  return reply.catch((err: unknown) => {
    const view = VIEW_READS.has(name) ? resolvedViewOf(err) : undefined;
    if (view === undefined) return routerErrorReply(router, err);
    return runResolvedView(ctx, name, cmd, view).catch((again: unknown) => routerErrorReply(router, again));
  });
}

function withinMaxTime(router: RouterServices, deadline: number | undefined, reply: Doc | Promise<Doc>): Doc | Promise<Doc> {
  if (deadline === undefined || !(reply instanceof Promise)) return reply;
  return beforeDeadline(reply, deadline, router.wallClock).catch((err: unknown) => routerErrorReply(router, err));
}

// The reads a view answers by its resolution (cluster_views.ts).
const VIEW_READS = new Set(['find', 'count', 'distinct', 'aggregate']);

export function routerErrorReply(router: RouterServices, err: unknown): Doc {
  if (!(err instanceof MongoError)) router.logger.error({ err, c: 'COMMAND' }, 'router command failed with an unexpected error');
  return errorReply(err);
}

export function buildRouterCommandTable(defs: readonly RouterCommand[]): Map<string, RouterCommand> {
  const table = new Map<string, RouterCommand>();
  for (const def of defs) for (const name of def.names) table.set(name, def);
  return table;
}

// The time a snapshot read outside a transaction reads at (command_entry.ts gave it one).
function snapshotReadTime(cmd: Doc): Timestamp | undefined {
  const rc = cmd.readConcern;
  return cmd.autocommit !== false && isPlainObject(rc) && rc.level === 'snapshot' && rc.atClusterTime instanceof Timestamp ? rc.atClusterTime : undefined;
}
