import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { builtinRolePrivileges } from './authorization_policy.js';
import { isBuiltinRole, type RoleName } from './users.js';

// User-defined roles as MongoDB keeps them: every database's roles in admin.system.roles, keyed
// "db.role", each with its own privileges and the roles it inherits. Pure: the caller finds role
// documents (a node in its own collection, a router through the config server).
export const ROLES_NS = 'admin.system.roles';

// MongoDB's resource patterns: {db, collection} with '' meaning any (both '': any normal
// resource), the cluster, or anything at all.
export type ResourcePattern = { db: string; collection: string } | { cluster: true } | { anyResource: true };

export interface Privilege { resource: ResourcePattern; actions: string[] }

// MongoDB's action types (action_type.idl) that a privilege may name; anything else is refused
// as MongoDB refuses it, so that a typo cannot pass for a grant.
const ACTION_TYPES = new Set([
  'addShard', 'advanceClusterTime', 'analyze', 'analyzeShardKey', 'anyAction', 'appendOplogNote', 'applicationMessage', 'applyOps', 'auditConfigure', 'authSchemaUpgrade',
  'bypassDocumentValidation', 'bypassWriteBlockingMode', 'changeCustomData', 'changeOwnCustomData', 'changeOwnPassword', 'changePassword', 'changeStream',
  'checkMetadataConsistency', 'cleanupOrphaned', 'clearJumboFlag', 'collMod', 'collStats', 'compact', 'configureQueryAnalyzer', 'connPoolStats', 'connPoolSync', 'convertToCapped',
  'cpuProfiler', 'createCollection', 'createIndex', 'createRole', 'createUser', 'dbCheck', 'dbHash', 'dbStats', 'dropCollection', 'dropConnections',
  'dropDatabase', 'dropIndex', 'dropRole', 'dropUser', 'enableProfiler', 'enableSharding', 'exportCollection', 'find', 'flushRouterConfig', 'forceUUID',
  'fsync', 'getClusterParameter', 'getDatabaseVersion', 'getDefaultRWConcern', 'getCmdLineOpts', 'getLog', 'getParameter', 'getShardMap', 'getShardVersion',
  'grantRole', 'hostInfo', 'impersonate', 'importCollection', 'indexStats', 'inprog', 'insert', 'internal', 'invalidateUserCache', 'killAnyCursor',
  'killAnySession', 'killCursors', 'killop', 'listCachedAndActiveUsers', 'listCollections', 'listCursors', 'listDatabases', 'listIndexes',
  'listSearchIndexes', 'listSessions', 'listShards', 'logRotate', 'moveChunk', 'moveCollection', 'netstat', 'operationMetrics', 'planCacheIndexFilter', 'planCacheRead',
  'planCacheWrite', 'refineCollectionShardKey', 'reIndex', 'remove', 'removeShard', 'renameCollectionSameDB', 'replSetConfigure', 'replSetGetConfig',
  'replSetGetStatus', 'replSetHeartbeat', 'replSetResizeOplog', 'replSetStateChange', 'reshardCollection', 'resync', 'revokeRole', 'rotateCertificates',
  'serverStatus', 'setAuthenticationRestriction', 'setClusterParameter', 'setDefaultRWConcern', 'setFeatureCompatibilityVersion', 'setParameter',
  'setUserWriteBlockMode', 'shardingState', 'shutdown', 'splitChunk', 'splitVector', 'storageDetails', 'top', 'touch', 'unlock', 'unshardCollection', 'update', 'useUUID',
  'validate', 'viewRole', 'viewUser',
]);

export function roleId(name: RoleName): string {
  return `${name.db}.${name.role}`;
}

export function roleString(name: RoleName): string {
  return `${name.role}@${name.db}`;
}

// The document admin.system.roles holds for a role.
export function roleDocument(name: RoleName, privileges: Privilege[], roles: RoleName[]): Doc {
  return { _id: roleId(name), role: name.role, db: name.db, privileges, roles };
}

// A role command's `roles`: a bare name is a role of the command's database.
export function parseRoleNames(value: unknown, db: string): RoleName[] {
  if (!Array.isArray(value)) throw new MongoError(ErrorCodes.BadValue, '"roles" field must be an array');
  return value.map((r: unknown) => {
    if (typeof r === 'string') return { role: r, db };
    if (r !== null && typeof r === 'object' && typeof (r as Doc).role === 'string' && typeof (r as Doc).db === 'string') return { role: (r as Doc).role as string, db: (r as Doc).db as string };
    throw new MongoError(ErrorCodes.BadValue, 'Role names must be either strings or objects');
  });
}

// A role command's `privileges`, those of one resource merged into one, as MongoDB stores them.
export function parsePrivileges(value: unknown): Privilege[] {
  if (!Array.isArray(value)) throw new MongoError(ErrorCodes.BadValue, '"privileges" field must be an array');
  const parsed = value.map((p: unknown) => {
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new MongoError(ErrorCodes.BadValue, 'Each privilege must be an object with "resource" and "actions" fields');
    const { resource, actions } = p as Doc;
    if (!Array.isArray(actions) || actions.some((a) => typeof a !== 'string')) throw new MongoError(ErrorCodes.BadValue, 'A privilege\'s "actions" must be an array of strings');
    const unknown = (actions as string[]).filter((a) => !ACTION_TYPES.has(a));
    if (unknown.length > 0) throw new MongoError(ErrorCodes.BadValue, `Unrecognized action privilege strings: ${unknown.join(',')}`);
    return { resource: parseResource(resource), actions: [...new Set(actions as string[])] };
  });
  return mergePrivileges([], parsed);
}

function parseResource(value: unknown): ResourcePattern {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new MongoError(ErrorCodes.BadValue, 'A privilege\'s "resource" must be an object');
  const r = value as Doc;
  const keys = Object.keys(r).sort().join(',');
  if (keys === 'cluster' && r.cluster === true) return { cluster: true };
  if (keys === 'anyResource' && r.anyResource === true) return { anyResource: true };
  if (keys === 'collection,db' && typeof r.db === 'string' && typeof r.collection === 'string') return { db: r.db, collection: r.collection };
  throw new MongoError(ErrorCodes.BadValue, 'A resource must be {db: <string>, collection: <string>}, {cluster: true} or {anyResource: true}');
}

function sameResource(a: ResourcePattern, b: ResourcePattern): boolean {
  if ('cluster' in a || 'cluster' in b) return 'cluster' in a && 'cluster' in b;
  if ('anyResource' in a || 'anyResource' in b) return 'anyResource' in a && 'anyResource' in b;
  return a.db === b.db && a.collection === b.collection;
}

// `held` with `given` added: a resource already held gains the new actions.
export function mergePrivileges(held: readonly Privilege[], given: readonly Privilege[]): Privilege[] {
  const out = held.map((p) => ({ resource: p.resource, actions: [...p.actions] }));
  for (const g of given) {
    const same = out.find((p) => sameResource(p.resource, g.resource));
    if (same === undefined) out.push({ resource: g.resource, actions: [...g.actions] });
    else for (const a of g.actions) if (!same.actions.includes(a)) same.actions.push(a);
  }
  return out;
}

// `held` less `given`'s actions; a privilege left with no action goes.
export function removePrivileges(held: readonly Privilege[], given: readonly Privilege[]): Privilege[] {
  return held
    .map((p) => {
      const removed = given.filter((g) => sameResource(g.resource, p.resource)).flatMap((g) => g.actions);
      return { resource: p.resource, actions: p.actions.filter((a) => !removed.includes(a)) };
    })
    .filter((p) => p.actions.length > 0);
}

// A role of a database other than admin may hold privileges on its own database only.
export function checkPrivilegesForRole(role: RoleName, privileges: readonly Privilege[]): void {
  if (role.db === 'admin') return;
  for (const { resource } of privileges) {
    if ('db' in resource && resource.db === role.db) continue;
    throw new MongoError(ErrorCodes.InvalidRoleModification, `Roles on the '${role.db}' database cannot be granted privileges that target other databases or the cluster`);
  }
}

// What a role may inherit: not itself, and only roles of its own database unless it is admin's.
// That each exists and that no cycle forms is the caller's to check, with the roles at hand.
export function checkRolesForRole(role: RoleName, roles: readonly RoleName[]): void {
  for (const r of roles) {
    if (r.role === role.role && r.db === role.db) throw new MongoError(ErrorCodes.InvalidRoleModification, `Cannot grant role ${roleString(role)} to itself.`);
    if (role.db !== 'admin' && r.db !== role.db) throw new MongoError(ErrorCodes.InvalidRoleModification, `Roles on the '${role.db}' database cannot be granted roles from other databases`);
  }
}

// Finds a user-defined role's document; undefined if there is none.
export type RoleLookup = (name: RoleName) => Doc | undefined;

export function roleNamesOf(doc: Doc | undefined): RoleName[] {
  const roles = doc?.roles;
  return Array.isArray(roles) ? (roles as RoleName[]).map((r) => ({ role: r.role, db: r.db })) : [];
}

export function privilegesOf(doc: Doc | undefined): Privilege[] {
  const privileges = doc?.privileges;
  return Array.isArray(privileges) ? (privileges as Privilege[]) : [];
}

// Every role `start` reaches, itself included, each once, in the order they are met: MongoDB's
// inheritedRoles. A role that no longer exists ends its branch. A cycle (which the role commands
// refuse) cannot loop: each role is visited once.
export function reachableRoles(start: readonly RoleName[], find: RoleLookup): RoleName[] {
  const seen = new Map<string, RoleName>();
  const queue = [...start];
  while (queue.length > 0) {
    const r = queue.shift()!;
    if (seen.has(roleId(r))) continue;
    seen.set(roleId(r), r);
    if (!isBuiltinRole(r)) queue.push(...roleNamesOf(find(r)));
  }
  return [...seen.values()];
}

// Whether `role` is among the roles `roles` reach: granting `roles` to it would close a cycle.
export function wouldCycle(role: RoleName, roles: readonly RoleName[], find: RoleLookup): boolean {
  return reachableRoles(roles, find).some((r) => r.role === role.role && r.db === role.db);
}

// The first of `roles` that exists neither as a built-in role nor in admin.system.roles.
export function missingRole(roles: readonly RoleName[], find: RoleLookup): RoleName | undefined {
  return roles.find((r) => !isBuiltinRole(r) && find(r) === undefined);
}

export function roleNotFound(role: RoleName): MongoError {
  return new MongoError(ErrorCodes.RoleNotFound, `Could not find role: ${roleString(role)}`);
}

// What `start` (a user's roles, or the roles a role inherits) hold, with `own` privileges besides
// (a role's own): every role reached, in MongoDB's inheritedRoles, and the privileges of them all,
// built-in roles' included, merged by resource (inheritedPrivileges).
export function inherited(start: readonly RoleName[], own: readonly Privilege[], find: RoleLookup): { inheritedRoles: RoleName[]; inheritedPrivileges: Privilege[] } {
  const inheritedRoles = reachableRoles(start, find);
  let inheritedPrivileges = mergePrivileges([], own);
  for (const r of inheritedRoles) inheritedPrivileges = mergePrivileges(inheritedPrivileges, isBuiltinRole(r) ? builtinRolePrivileges(r) : privilegesOf(find(r)));
  return { inheritedRoles, inheritedPrivileges };
}

// What a user document as a look-up answers it lets its connection do: its inheritedRoles and
// inheritedPrivileges when the look-up resolved them (a node's, and the config server's usersInfo
// with showPrivileges), its own roles otherwise (the internal user).
export function authorizationOf(user: Doc): { roles: RoleName[]; privileges: Privilege[] } {
  const roles = Array.isArray(user.inheritedRoles) ? (user.inheritedRoles as RoleName[]) : roleNamesOf(user);
  const privileges = Array.isArray(user.inheritedPrivileges) ? (user.inheritedPrivileges as Privilege[]) : [];
  return { roles: roles.map((r) => ({ role: r.role, db: r.db })), privileges };
}
