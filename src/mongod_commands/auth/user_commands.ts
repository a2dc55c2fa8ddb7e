import type { Doc } from '../../bson/values.js';
import { connectionAuthInfo } from '../../auth/connection_auth.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { mechanismsOf, parseMechanisms, parseRoles, USERS_NS, userDocument, userId, type RoleName, type UserName } from '../../auth/users.js';
import { requireString } from '../../command_layer/args.js';
import type { CommandContext, CommandDefinition, MongodServices } from '../command.js';
import { authOf } from './sasl_commands.js';
import { invalidateUserCache, roleLookup, userCacheGeneration, withInheritance } from './user_cache.js';

// A user's roles: built-in ones, or user-defined ones of this node's admin.system.roles.
function rolesOf(node: MongodServices, value: unknown, db: string): RoleName[] {
  const find = roleLookup(node);
  return parseRoles(value, db, (r) => find(r) !== undefined);
}

export const createUserCommand: CommandDefinition = {
  names: ['createUser'],
  run: (ctx, cmd) => {
    const name: UserName = { user: requireString(cmd, 'createUser'), db: ctx.db };
    if (name.user === '') throw new MongoError(ErrorCodes.BadValue, 'User document needs \'user\' field to be non-empty');
    if (name.db === 'local') throw new MongoError(ErrorCodes.BadValue, 'Cannot create users in the local database');
    if (typeof cmd.pwd !== 'string') throw new MongoError(ErrorCodes.BadValue, "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db");
    if (cmd.pwd === '') throw new MongoError(ErrorCodes.BadValue, 'User passwords must not be empty');
    if (cmd.roles === undefined) throw new MongoError(ErrorCodes.BadValue, '"createUser" command requires a "roles" array');
    const roles = rolesOf(ctx.node, cmd.roles, ctx.db);
    const mechanisms = parseMechanisms(cmd.mechanisms);
    if (ctx.node.local.findOne(USERS_NS, { _id: userId(name) }) !== undefined) {
      throw new MongoError(ErrorCodes.Location51003, `User "${name.user}@${name.db}" already exists`);
    }
    const doc = userDocument(name, cmd.pwd, roles, mechanisms);
    ctx.node.local.write((w) => w.insert(USERS_NS, doc));
    invalidateUserCache(ctx.node);
    ctx.node.logger.info({ c: 'ACCESS', user: name.user, db: name.db }, 'Created user');
    return { ok: 1 };
  },
};

export const dropUserCommand: CommandDefinition = {
  names: ['dropUser'],
  run: (ctx, cmd) => {
    const name: UserName = { user: requireString(cmd, 'dropUser'), db: ctx.db };
    const removed = ctx.node.local.write((w) => w.delete(USERS_NS, { _id: userId(name) }));
    if (removed === 0) throw new MongoError(ErrorCodes.UserNotFound, `User '${name.user}@${name.db}' not found`);
    invalidateUserCache(ctx.node);
    return { ok: 1 };
  },
};

// usersInfo: 1 (the database's users), a name, {user, db}, or an array of those; as MongoDB
// answers, credentials only with showCredentials, the mechanisms they are for always, and with
// showPrivileges the roles and privileges the user holds through its roles (inheritedRoles,
// inheritedPrivileges: what a router asks the config server for at a login).
export const usersInfoCommand: CommandDefinition = {
  names: ['usersInfo'],
  run: (ctx, cmd) => {
    const arg = cmd.usersInfo;
    const filter: Doc = arg === 1 ? { db: ctx.db }
      : arg !== null && typeof arg === 'object' && (arg as Doc).forAllDBs === true ? {}
      : { _id: { $in: (Array.isArray(arg) ? arg : [arg]).map((u) => userId(userNameOf(u, ctx.db))) } };
    const users = ctx.node.local.find(USERS_NS, filter, { sort: { _id: 1 } }).map((doc) => {
      const { credentials, ...rest } = cmd.showPrivileges === true ? withInheritance(ctx.node, doc) : doc;
      return { ...rest, ...(cmd.showCredentials === true ? { credentials } : {}), mechanisms: mechanismsOf(doc) };
    });
    return { users, ok: 1 };
  },
};

export const connectionStatusCommand: CommandDefinition = {
  names: ['connectionStatus'],
  run: (ctx, cmd) => ({ authInfo: connectionAuthInfo(authOf(ctx).user, cmd.showPrivileges === true), ok: 1 }),
};


// updateUser: a new password (new credentials for the user's mechanisms, or those `mechanisms`
// names, a subset of them), new roles, new customData; anything else of the user stays.
export const updateUserCommand: CommandDefinition = {
  names: ['updateUser'],
  run: (ctx, cmd) => {
    const name: UserName = { user: requireString(cmd, 'updateUser'), db: ctx.db };
    if (cmd.pwd === undefined && cmd.roles === undefined && cmd.customData === undefined) {
      throw new MongoError(ErrorCodes.BadValue, 'Must specify at least one field to update in updateUser');
    }
    if (cmd.pwd !== undefined && typeof cmd.pwd !== 'string') throw new MongoError(ErrorCodes.BadValue, "BSON field 'updateUser.pwd' is the wrong type, expected type 'string'");
    if (cmd.pwd === '') throw new MongoError(ErrorCodes.BadValue, 'User passwords must not be empty');
    const roles = cmd.roles === undefined ? undefined : rolesOf(ctx.node, cmd.roles, ctx.db);
    const doc = ctx.node.local.findOne(USERS_NS, { _id: userId(name) });
    if (doc === undefined) throw new MongoError(ErrorCodes.UserNotFound, `User ${name.user}@${name.db} not found`);
    const had = mechanismsOf(doc);
    const mechanisms = cmd.mechanisms === undefined ? had : parseMechanisms(cmd.mechanisms);
    if (mechanisms.some((m) => !had.includes(m))) throw new MongoError(ErrorCodes.BadValue, 'mechanisms field must be a subset of previously set mechanisms');
    if (cmd.mechanisms !== undefined && cmd.pwd === undefined) throw new MongoError(ErrorCodes.BadValue, 'Must provide a \'pwd\' field when changing the user\'s mechanisms');
    const set: Doc = {};
    if (typeof cmd.pwd === 'string') set.credentials = userDocument(name, cmd.pwd, [], mechanisms).credentials;
    if (roles !== undefined) set.roles = roles;
    if (cmd.customData !== undefined) set.customData = cmd.customData;
    ctx.node.local.write((w) => w.update(USERS_NS, { _id: userId(name) }, { $set: set }));
    invalidateUserCache(ctx.node);
    return { ok: 1 };
  },
};

export const grantRolesToUserCommand: CommandDefinition = {
  names: ['grantRolesToUser'],
  run: (ctx, cmd) => changeRoles(ctx.node, 'grantRolesToUser', { user: requireString(cmd, 'grantRolesToUser'), db: ctx.db }, cmd.roles, ctx.db, (held, given) => [
    ...held, ...given.filter((g) => !held.some((h) => h.role === g.role && h.db === g.db)),
  ]),
};

export const revokeRolesFromUserCommand: CommandDefinition = {
  names: ['revokeRolesFromUser'],
  run: (ctx, cmd) => changeRoles(ctx.node, 'revokeRolesFromUser', { user: requireString(cmd, 'revokeRolesFromUser'), db: ctx.db }, cmd.roles, ctx.db, (held, given) => (
    held.filter((h) => !given.some((g) => g.role === h.role && g.db === h.db))
  )),
};

function changeRoles(node: CommandContext['node'], command: string, name: UserName, value: unknown, db: string, change: (held: RoleName[], given: RoleName[]) => RoleName[]): Doc {
  if (!Array.isArray(value) || value.length === 0) throw new MongoError(ErrorCodes.BadValue, `"${command}" command requires a non-empty "roles" array`);
  const given = rolesOf(node, value, db);
  const doc = node.local.findOne(USERS_NS, { _id: userId(name) });
  if (doc === undefined) throw new MongoError(ErrorCodes.UserNotFound, `Could not find user "${name.user}" for db "${name.db}"`);
  const roles = change((doc.roles as RoleName[] | undefined) ?? [], given);
  node.local.write((w) => w.update(USERS_NS, { _id: userId(name) }, { $set: { roles } }));
  invalidateUserCache(node);
  return { ok: 1 };
}

// A config server's user cache generation, for routers (mongos's user cache polls it).
export const getUserCacheGenerationCommand: CommandDefinition = {
  names: ['_getUserCacheGeneration'],
  adminOnly: true,
  run: (ctx) => ({ cacheGeneration: userCacheGeneration(ctx.node), ok: 1 }),
};

function userNameOf(value: unknown, db: string): UserName {
  if (typeof value === 'string') return { user: value, db };
  if (value !== null && typeof value === 'object' && typeof (value as Doc).user === 'string' && typeof (value as Doc).db === 'string') {
    return { user: (value as Doc).user as string, db: (value as Doc).db as string };
  }
  throw new MongoError(ErrorCodes.BadValue, 'User name must be either a string or an object with "user" and "db" fields');
}
