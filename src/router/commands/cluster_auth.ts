import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { connectionAuthInfo, isLoopback, type ConnectionAuth } from '../../auth/connection_auth.js';
import { helloAuthentication, saslContinue, saslStart, type SaslEnvironment } from '../../auth/sasl_conversation.js';
import { authorizationOf } from '../../auth/roles.js';
import type { UserName } from '../../auth/users.js';
import { randomBytes } from 'node:crypto';
import type { ConnectionInfo } from '../../command_layer/connection_info.js';
import { withInternalUser } from '../../auth/internal_user.js';
import { checkOk } from '../../wire/remote_cursor.js';
import type { RouterCommand, RouterContext, RouterServices } from '../router_services.js';

// Authentication on a router, as mongos does it: the cluster's users live on the config server
// (admin.system.users there), the router reads a user's credentials and roles from it with
// usersInfo when a client logs in, and forwards the user commands to it. The conversation itself
// is src/auth's, the same as a node's.

export const clusterSaslStartCommand: RouterCommand = {
  names: ['saslStart'],
  run: (ctx, cmd) => saslStart(saslEnvironment(ctx), authOf(ctx), ctx.db, cmd),
};

export const clusterSaslContinueCommand: RouterCommand = {
  names: ['saslContinue'],
  run: (ctx, cmd) => saslContinue(saslEnvironment(ctx), authOf(ctx), cmd),
};

// What hello adds for the driver's handshake (src/auth's helloAuthentication).
export function routerHelloAuthentication(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  return helloAuthentication(saslEnvironment(ctx), authOf(ctx), cmd);
}

export const clusterConnectionStatusCommand: RouterCommand = {
  names: ['connectionStatus'],
  run: (ctx, cmd) => ({ authInfo: connectionAuthInfo(ctx.conn.auth?.user, cmd.showPrivileges === true), ok: 1 }),
};

// createUser reaches the router's dispatcher without a login only from this host (the localhost
// exception); it is run then only while the config server holds no user at all.
export const clusterCreateUserCommand: RouterCommand = {
  names: ['createUser'],
  run: async (ctx, cmd) => {
    if (ctx.router.options.auth && ctx.conn.auth?.user === undefined) {
      const all = checkOk(await ctx.router.client.command(ctx.router.options.configHost, 'admin', { usersInfo: { forAllDBs: true } }));
      if (!isLoopback(ctx.conn.remote) || (all.users as unknown[]).length > 0) throw new MongoError(ErrorCodes.Unauthorized, 'command createUser requires authentication');
    }
    return changeUsers(ctx, cmd);
  },
};

export const clusterUserCommands: readonly RouterCommand[] = [
  { names: ['dropUser'], run: changeUsers },
  { names: ['updateUser'], run: changeUsers },
  { names: ['grantRolesToUser'], run: changeUsers },
  { names: ['revokeRolesFromUser'], run: changeUsers },
  { names: ['usersInfo'], run: toConfigServer },
  { names: ['rolesInfo'], run: toConfigServer },
  // The cluster's roles live on the config server beside its users, as on mongos.
  { names: ['createRole'], run: changeUsers },
  { names: ['updateRole'], run: changeUsers },
  { names: ['dropRole'], run: changeUsers },
  { names: ['dropAllRolesFromDatabase'], run: changeUsers },
  { names: ['grantRolesToRole'], run: changeUsers },
  { names: ['revokeRolesFromRole'], run: changeUsers },
  { names: ['grantPrivilegesToRole'], run: changeUsers },
  { names: ['revokePrivilegesFromRole'], run: changeUsers },
];

// A change of users or roles through this router applies to its own connections at their next command;
// other routers see it at their next poll of the config server's generation.
async function changeUsers(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  try {
    return await toConfigServer(ctx, cmd);
  } finally {
    ctx.router.userCache.generation = newUserCacheGeneration();
  }
}

export function newUserCacheGeneration(): string {
  return randomBytes(12).toString('hex');
}

// The connection's user with its roles and privileges read again from the config server, after the router's user
// cache generation moved; a user dropped since it logged in is logged out.
export async function refreshAuthenticatedUser(router: RouterServices, conn: ConnectionInfo): Promise<void> {
  const user = conn.auth?.user;
  if (user === undefined) return;
  const generation = router.userCache.generation;
  if (user.db === 'local') {
    user.generation = generation;
    return;
  }
  const doc = await configServerUser(router, user);
  if (conn.auth?.user !== user) return;
  if (doc === undefined) {
    conn.auth.user = undefined;
    router.logger.info({ c: 'ACCESS', user: user.user, db: user.db, remote: conn.remote }, 'Logged out a user that was dropped');
    return;
  }
  conn.auth.user = { user: user.user, db: user.db, ...authorizationOf(doc), generation };
}

// The generic arguments that are the router's own (its session, its times); the rest of a user
// command goes to the config server as the client sent it.
const ROUTER_FIELDS = new Set(['$db', 'lsid', 'txnNumber', '$clusterTime', '$readPreference', 'readConcern', 'autocommit', 'startTransaction']);

async function toConfigServer(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  const forwarded: Doc = {};
  for (const [k, v] of Object.entries(cmd)) if (!ROUTER_FIELDS.has(k)) forwarded[k] = v;
  const { $clusterTime: _time, operationTime: _op, ...reply } = checkOk(await ctx.router.client.command(ctx.router.options.configHost, ctx.db, forwarded));
  return reply;
}

// A user as the config server holds it, credentials included, with the roles and privileges its
// roles give it (mongos asks the same of it: usersInfo with showPrivileges and showCredentials).
function configServerUser(router: RouterServices, name: UserName): Promise<Doc | undefined> {
  return router.client.command(router.options.configHost, name.db, { usersInfo: { user: name.user, db: name.db }, showCredentials: true, showPrivileges: true })
    .then((reply) => (checkOk(reply).users as Doc[])[0]);
}

function saslEnvironment(ctx: RouterContext): SaslEnvironment {
  return {
    lookup: withInternalUser((name) => configServerUser(ctx.router, name), ctx.router.options.keyFile?.key),
    log: (fields, msg) => ctx.router.logger.info(fields, msg),
    remote: ctx.conn.remote,
    generation: () => ctx.router.userCache.generation,
    attempts: ctx.router.authentication,
  };
}

function authOf(ctx: RouterContext): ConnectionAuth {
  ctx.conn.auth ??= {};
  return ctx.conn.auth;
}
