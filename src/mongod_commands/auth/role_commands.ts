import type { Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { builtinRolePrivileges } from '../../auth/authorization_policy.js';
import {
  checkPrivilegesForRole, checkRolesForRole, inherited, mergePrivileges, missingRole, parsePrivileges, parseRoleNames, privilegesOf,
  removePrivileges, roleDocument, roleId, roleNamesOf, roleNotFound, ROLES_NS, roleString, wouldCycle,
} from '../../auth/roles.js';
import { builtinRoleNames, isBuiltinRole, USERS_NS, type RoleName } from '../../auth/users.js';
import { requireString } from '../../command_layer/args.js';
import type { CommandDefinition, MongodServices } from '../command.js';
import { invalidateUserCache, roleLookup } from './user_cache.js';

// MongoDB's role management commands over the node's admin.system.roles (on a config server, the
// cluster's roles: routers forward these commands there). Every change draws a new user cache
// generation, so connections holding a changed role read what they hold again before their next
// command, on this node at once and on routers at their next poll.

export const createRoleCommand: CommandDefinition = {
  names: ['createRole'],
  run: (ctx, cmd) => {
    const name: RoleName = { role: requireString(cmd, 'createRole'), db: ctx.db };
    if (name.role === '') throw new MongoError(ErrorCodes.BadValue, 'Role name must be non-empty');
    if (name.db === 'local') throw new MongoError(ErrorCodes.BadValue, 'Cannot create roles in the local database');
    if (name.db === '$external') throw new MongoError(ErrorCodes.BadValue, 'Cannot create roles in the $external database');
    if (isBuiltinRole(name)) throw new MongoError(ErrorCodes.BadValue, 'Cannot create roles with the same name as a built-in role');
    for (const field of ['privileges', 'roles']) {
      if (cmd[field] === undefined) throw new MongoError(40414, `BSON field 'createRole.${field}' is missing but a required field`);
    }
    refuseAuthenticationRestrictions(cmd);
    const privileges = parsePrivileges(cmd.privileges);
    const roles = parseRoleNames(cmd.roles, ctx.db);
    checkGrantableRoles(ctx.node, name, roles);
    checkPrivilegesForRole(name, privileges);
    if (ctx.node.local.findOne(ROLES_NS, { _id: roleId(name) }) !== undefined) throw new MongoError(ErrorCodes.Location51002, `Role "${roleString(name)}" already exists`);
    ctx.node.local.write((w) => w.insert(ROLES_NS, roleDocument(name, privileges, dedupe(roles))));
    changed(ctx.node, 'Created role', name);
    return { ok: 1 };
  },
};

// updateRole replaces the privileges, the inherited roles, or both.
export const updateRoleCommand: CommandDefinition = {
  names: ['updateRole'],
  run: (ctx, cmd) => {
    const name: RoleName = { role: requireString(cmd, 'updateRole'), db: ctx.db };
    refuseAuthenticationRestrictions(cmd);
    if (cmd.privileges === undefined && cmd.roles === undefined) throw new MongoError(ErrorCodes.BadValue, 'Must specify at least one field to update in updateRole');
    const privileges = cmd.privileges === undefined ? undefined : parsePrivileges(cmd.privileges);
    const roles = cmd.roles === undefined ? undefined : parseRoleNames(cmd.roles, ctx.db);
    existingRole(ctx.node, name);
    if (roles !== undefined) checkGrantableRoles(ctx.node, name, roles);
    if (privileges !== undefined) checkPrivilegesForRole(name, privileges);
    const set: Doc = {};
    if (privileges !== undefined) set.privileges = privileges;
    if (roles !== undefined) set.roles = dedupe(roles);
    ctx.node.local.write((w) => w.update(ROLES_NS, { _id: roleId(name) }, { $set: set }));
    changed(ctx.node, 'Updated role', name);
    return { ok: 1 };
  },
};

// dropRole takes the role from every user and role that holds it, then removes it.
export const dropRoleCommand: CommandDefinition = {
  names: ['dropRole'],
  run: (ctx, cmd) => {
    const name: RoleName = { role: requireString(cmd, 'dropRole'), db: ctx.db };
    if (isBuiltinRole(name)) throw builtinRoleUnchangeable(name);
    existingRole(ctx.node, name);
    dropRoles(ctx.node, (r) => r.role === name.role && r.db === name.db);
    changed(ctx.node, 'Dropped role', name);
    return { ok: 1 };
  },
};

export const dropAllRolesFromDatabaseCommand: CommandDefinition = {
  names: ['dropAllRolesFromDatabase'],
  run: (ctx) => {
    const n = dropRoles(ctx.node, (r) => r.db === ctx.db);
    invalidateUserCache(ctx.node);
    ctx.node.logger.info({ c: 'ACCESS', db: ctx.db, n }, 'Dropped all roles of a database');
    return { n, ok: 1 };
  },
};

export const grantRolesToRoleCommand: CommandDefinition = {
  names: ['grantRolesToRole'],
  run: (ctx, cmd) => changeRole(ctx.node, 'grantRolesToRole', { role: requireString(cmd, 'grantRolesToRole'), db: ctx.db }, cmd.roles, 'roles', (name, held) => {
    const given = parseRoleNames(cmd.roles, ctx.db);
    checkGrantableRoles(ctx.node, name, given);
    return { roles: dedupe([...roleNamesOf(held), ...given]) };
  }),
};

export const revokeRolesFromRoleCommand: CommandDefinition = {
  names: ['revokeRolesFromRole'],
  run: (ctx, cmd) => changeRole(ctx.node, 'revokeRolesFromRole', { role: requireString(cmd, 'revokeRolesFromRole'), db: ctx.db }, cmd.roles, 'roles', (_name, held) => {
    const given = parseRoleNames(cmd.roles, ctx.db);
    return { roles: roleNamesOf(held).filter((h) => !given.some((g) => g.role === h.role && g.db === h.db)) };
  }),
};

export const grantPrivilegesToRoleCommand: CommandDefinition = {
  names: ['grantPrivilegesToRole'],
  run: (ctx, cmd) => changeRole(ctx.node, 'grantPrivilegesToRole', { role: requireString(cmd, 'grantPrivilegesToRole'), db: ctx.db }, cmd.privileges, 'privileges', (name, held) => {
    const given = parsePrivileges(cmd.privileges);
    checkPrivilegesForRole(name, given);
    return { privileges: mergePrivileges(privilegesOf(held), given) };
  }),
};

export const revokePrivilegesFromRoleCommand: CommandDefinition = {
  names: ['revokePrivilegesFromRole'],
  run: (ctx, cmd) => changeRole(ctx.node, 'revokePrivilegesFromRole', { role: requireString(cmd, 'revokePrivilegesFromRole'), db: ctx.db }, cmd.privileges, 'privileges', (_name, held) => (
    { privileges: removePrivileges(privilegesOf(held), parsePrivileges(cmd.privileges)) }
  )),
};

// rolesInfo: 1 (the database's user-defined roles, and its built-in ones with showBuiltinRoles),
// a name, {role, db}, or an array of those (the ones that exist), each as MongoDB describes it:
// the roles it inherits directly and through them, and with showPrivileges its own privileges
// and all it holds.
export const rolesInfoCommand: CommandDefinition = {
  names: ['rolesInfo'],
  run: (ctx, cmd) => ({ roles: rolesInfo(ctx.node, cmd, ctx.db), ok: 1 }),
};

function rolesInfo(node: MongodServices, cmd: Doc, db: string): Doc[] {
  const arg = cmd.rolesInfo;
  const show = cmd.showPrivileges;
  if (show !== undefined && typeof show !== 'boolean') throw new MongoError(ErrorCodes.BadValue, 'showPrivileges: "asUserFragment" is not supported');
  let names: RoleName[];
  if (arg === 1 || arg === true) {
    names = node.local.find(ROLES_NS, { db }, { sort: { _id: 1 } }).map((d) => ({ role: d.role as string, db: d.db as string }));
    if (cmd.showBuiltinRoles === true) names.push(...builtinRoleNames(db));
  } else {
    names = parseRoleNames(Array.isArray(arg) ? arg : [arg], db);
  }
  const find = roleLookup(node);
  return names.flatMap((name): Doc[] => {
    if (isBuiltinRole(name)) {
      const privileges = builtinRolePrivileges(name);
      return [{ role: name.role, db: name.db, isBuiltin: true, roles: [], inheritedRoles: [], ...(show === true ? { privileges, inheritedPrivileges: privileges } : {}) }];
    }
    const doc = find(name);
    if (doc === undefined) return [];
    const own = privilegesOf(doc);
    const { inheritedRoles, inheritedPrivileges } = inherited(roleNamesOf(doc), own, find);
    return [{
      _id: doc._id, role: doc.role, db: doc.db, ...(show === true ? { privileges: own } : {}), roles: roleNamesOf(doc), isBuiltin: false,
      inheritedRoles, ...(show === true ? { inheritedPrivileges } : {}),
    }];
  });
}

// The checks of MongoDB's checkOkayToGrantRolesToRole: not itself, of its database (unless an
// admin role), each existing, and no cycle.
function checkGrantableRoles(node: MongodServices, name: RoleName, roles: readonly RoleName[]): void {
  checkRolesForRole(name, roles);
  const find = roleLookup(node);
  const missing = missingRole(roles, find);
  if (missing !== undefined) throw new MongoError(ErrorCodes.RoleNotFound, `Cannot grant roles to '${roleString(name)}': Could not find role: ${roleString(missing)}`);
  if (wouldCycle(name, roles, find)) throw new MongoError(ErrorCodes.InvalidRoleModification, `Granting roles to ${roleString(name)} would introduce a cycle in the role graph`);
}

// MongoDB keeps a role's authenticationRestrictions (client and server addresses) and checks them
// at each login; this server does not check them, so it refuses them rather than keep a
// restriction it would not enforce.
function refuseAuthenticationRestrictions(cmd: Doc): void {
  const value = cmd.authenticationRestrictions;
  if (value !== undefined && !(Array.isArray(value) && value.length === 0)) throw new MongoError(ErrorCodes.BadValue, 'authenticationRestrictions are not supported');
}

function existingRole(node: MongodServices, name: RoleName): Doc {
  const doc = node.local.findOne(ROLES_NS, { _id: roleId(name) });
  if (doc === undefined) throw roleNotFound(name);
  return doc;
}

function builtinRoleUnchangeable(name: RoleName): MongoError {
  return new MongoError(ErrorCodes.BadValue, `${roleString(name)} is a built-in role and cannot be modified`);
}

// The grant and revoke commands: a non-empty list, a role that is not built-in and exists, then
// its new roles or privileges.
function changeRole(node: MongodServices, command: string, name: RoleName, given: unknown, field: string, change: (name: RoleName, held: Doc) => Doc): Doc {
  if (!Array.isArray(given) || given.length === 0) throw new MongoError(ErrorCodes.BadValue, `${command} command requires a non-empty "${field}" array`);
  if (isBuiltinRole(name)) throw builtinRoleUnchangeable(name);
  const held = existingRole(node, name);
  const set = change(name, held);
  node.local.write((w) => w.update(ROLES_NS, { _id: roleId(name) }, { $set: set }));
  changed(node, command, name);
  return { ok: 1 };
}

// Removes the roles `dropped` picks: first from every user and every other role holding them,
// then the roles themselves; answers how many roles went.
function dropRoles(node: MongodServices, dropped: (r: RoleName) => boolean): number {
  const holders = [USERS_NS, ROLES_NS].flatMap((ns) => node.local.find(ns).flatMap((doc) => {
    const roles = roleNamesOf(doc);
    const kept = roles.filter((r) => !dropped(r));
    return kept.length === roles.length ? [] : [{ ns, _id: doc._id, kept }];
  }));
  const gone = node.local.find(ROLES_NS).filter((d) => dropped({ role: d.role as string, db: d.db as string }));
  node.local.write((w) => {
    for (const h of holders) w.update(h.ns, { _id: h._id }, { $set: { roles: h.kept } });
    for (const d of gone) w.delete(ROLES_NS, { _id: d._id });
  });
  return gone.length;
}

function dedupe(roles: readonly RoleName[]): RoleName[] {
  return roles.filter((r, i) => roles.findIndex((o) => o.role === r.role && o.db === r.db) === i);
}

function changed(node: MongodServices, what: string, name: RoleName): void {
  invalidateUserCache(node);
  node.logger.info({ c: 'ACCESS', role: name.role, db: name.db }, what);
}
