import type { Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { mechanismsOf, parseMechanisms, parseRoles, USERS_NS, userDocument, userId, type UserName } from '../../auth/users.js';
import { requireString } from '../args.js';
import type { CommandDefinition } from '../command.js';
import { authOf } from './sasl_commands.js';

export const createUserCommand: CommandDefinition = {
  names: ['createUser'],
  run: (ctx, cmd) => {
    const name: UserName = { user: requireString(cmd, 'createUser'), db: ctx.db };
    if (name.user === '') throw new MongoError(ErrorCodes.BadValue, 'User document needs \'user\' field to be non-empty');
    if (typeof cmd.pwd !== 'string') throw new MongoError(ErrorCodes.BadValue, "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db");
    if (cmd.pwd === '') throw new MongoError(ErrorCodes.BadValue, 'User passwords must not be empty');
    if (cmd.roles === undefined) throw new MongoError(ErrorCodes.BadValue, '"createUser" command requires a "roles" array');
    const roles = parseRoles(cmd.roles, ctx.db);
    const mechanisms = parseMechanisms(cmd.mechanisms);
    if (ctx.node.local.findOne(USERS_NS, { _id: userId(name) }) !== undefined) {
      throw new MongoError(ErrorCodes.Location51003, `User "${name.user}@${name.db}" already exists`);
    }
    const doc = userDocument(name, cmd.pwd, roles, mechanisms);
    ctx.node.local.write((w) => w.insert(USERS_NS, doc));
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
    return { ok: 1 };
  },
};

// usersInfo: 1 (the database's users), a name, {user, db}, or an array of those; as MongoDB
// answers, credentials only with showCredentials, and the mechanisms they are for always.
export const usersInfoCommand: CommandDefinition = {
  names: ['usersInfo'],
  run: (ctx, cmd) => {
    const arg = cmd.usersInfo;
    const filter: Doc = arg === 1 ? { db: ctx.db }
      : arg !== null && typeof arg === 'object' && (arg as Doc).forAllDBs === true ? {}
      : { _id: { $in: (Array.isArray(arg) ? arg : [arg]).map((u) => userId(userNameOf(u, ctx.db))) } };
    const users = ctx.node.local.find(USERS_NS, filter, { sort: { _id: 1 } }).map((doc) => {
      const { credentials, ...rest } = doc;
      return { ...rest, ...(cmd.showCredentials === true ? { credentials } : {}), mechanisms: mechanismsOf(doc) };
    });
    return { users, ok: 1 };
  },
};

export const connectionStatusCommand: CommandDefinition = {
  names: ['connectionStatus'],
  run: (ctx) => {
    const user = authOf(ctx).user;
    return {
      authInfo: {
        authenticatedUsers: user === undefined ? [] : [{ user: user.user, db: user.db }],
        authenticatedUserRoles: user === undefined ? [] : user.roles.map((r) => ({ role: r.role, db: r.db })),
      },
      ok: 1,
    };
  },
};

function userNameOf(value: unknown, db: string): UserName {
  if (typeof value === 'string') return { user: value, db };
  if (value !== null && typeof value === 'object' && typeof (value as Doc).user === 'string' && typeof (value as Doc).db === 'string') {
    return { user: (value as Doc).user as string, db: (value as Doc).db as string };
  }
  throw new MongoError(ErrorCodes.BadValue, 'User name must be either a string or an object with "user" and "db" fields');
}
