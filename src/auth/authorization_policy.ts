import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { formatValue } from '../bson/format.js';
import type { Privilege, ResourcePattern } from './roles.js';
import type { RoleName } from './users.js';

// Whether a connection's roles let it run one command, as MongoDB's authorization checks decide
// it: each command needs actions on a resource (a collection, a database or the cluster), each
// built-in role grants actions on resources (builtin_roles.yml), and user-defined roles grant
// the privileges they hold and inherit. Pure: the caller passes what the connection proved and
// the command; a refusal is the MongoError to answer.

// What a connection holds: every role its user has, directly or through other roles (MongoDB's
// inheritedRoles), and the privileges of them all (inheritedPrivileges).
export interface Authorization {
  roles: readonly RoleName[];
  privileges?: readonly Privilege[];
  // The logged-in user's name: usersInfo of oneself needs no viewUser.
  user?: string;
  db?: string;
}

// 'anyNormal' is every database but local and config at once: what a command asks when it may
// touch any of them (updateUser's roles may revoke a role of any database).
type Resource = { kind: 'collection'; db: string; coll: string } | { kind: 'database'; db: string } | { kind: 'anyNormal' } | { kind: 'cluster' };

interface Requirement { resource: Resource; actions: readonly string[] }

// What a role grants: actions on its own database, on every database but local and config (MongoDB's
// "any normal resource"), on named databases, and on the cluster. System collections (system.*)
// are outside every grant but root's.
interface Grant {
  own?: readonly string[];
  anyNormal?: readonly string[];
  named?: Readonly<Record<string, readonly string[]>>;
  cluster?: readonly string[];
}

const READ = ['changeStream', 'collStats', 'dbHash', 'dbStats', 'find', 'killCursors', 'listCollections', 'listIndexes', 'listSearchIndexes', 'planCacheRead'];
const READ_WRITE = [...READ, 'convertToCapped', 'createCollection', 'createIndex', 'dropCollection', 'dropIndex', 'insert', 'remove', 'renameCollectionSameDB', 'update'];
const DB_ADMIN = [
  'analyze', 'bypassDocumentValidation', 'collMod', 'collStats', 'compact', 'configureQueryAnalyzer', 'convertToCapped', 'createCollection', 'dbStats', 'dropCollection',
  'dropDatabase', 'dropIndex', 'createIndex', 'enableProfiler', 'listCollections', 'listIndexes', 'listSearchIndexes', 'planCacheIndexFilter',
  'planCacheRead', 'planCacheWrite', 'reIndex', 'renameCollectionSameDB', 'storageDetails', 'validate',
];
const USER_ADMIN = [
  'changeCustomData', 'changePassword', 'createUser', 'createRole', 'dropUser', 'dropRole', 'grantRole', 'revokeRole', 'setAuthenticationRestriction',
  'viewUser', 'viewRole',
];
const STATISTICS = ['collStats', 'dbStats', 'getDatabaseVersion', 'getShardVersion', 'indexStats'];
const CLUSTER_MONITOR = [
  'connPoolStats', 'getCmdLineOpts', 'getDefaultRWConcern', 'getLog', 'getParameter', 'getShardMap', 'hostInfo', 'inprog', 'listDatabases',
  'listSessions', 'listShards', 'netstat', 'serverStatus', 'top', 'shardingState',
];
// The enableSharding role's actions on every normal database (MongoDB 8.0's builtin_roles.yml and
// its docs: moveCollection and unshardCollection among them), which clusterManager holds too.
const ENABLE_SHARDING = ['analyzeShardKey', 'enableSharding', 'moveCollection', 'refineCollectionShardKey', 'reshardCollection', 'unshardCollection'];
// clusterManager's actions on every normal database, and on config and local, where it also
// writes (and reads config: it inherits read@config).
const CLUSTER_MANAGER_DB = [...ENABLE_SHARDING, 'configureQueryAnalyzer', 'clearJumboFlag', 'splitChunk', 'moveChunk', 'splitVector'];
const CLUSTER_MANAGER_CLUSTER = [
  'addShard', 'removeShard', 'cleanupOrphaned', 'checkMetadataConsistency', 'flushRouterConfig', 'getDefaultRWConcern', 'setDefaultRWConcern', 'listSessions',
  'listShards', 'setFeatureCompatibilityVersion', 'appendOplogNote', 'applicationMessage', 'replSetConfigure', 'replSetGetConfig', 'replSetGetStatus',
  'replSetStateChange', 'resync', 'setClusterParameter', 'getClusterParameter',
];
// clusterAdmin is clusterMonitor, hostManager and clusterManager: their cluster actions, and
// clusterManager's writes to config and local.
const CLUSTER_ADMIN = [
  ...new Set([...CLUSTER_MONITOR, ...CLUSTER_MANAGER_CLUSTER, 'killAnyCursor', 'killAnySession', 'killop', 'setParameter', 'shutdown']),
];
const MONITORED = { config: [...READ, ...STATISTICS], local: [...READ, ...STATISTICS] };
const CLUSTER_MANAGER_WRITES = ['insert', 'update', 'remove'];

const DATABASE_ROLE_GRANTS: Record<string, Grant> = {
  read: { own: READ },
  readWrite: { own: READ_WRITE },
  dbAdmin: { own: DB_ADMIN },
  userAdmin: { own: USER_ADMIN },
  dbOwner: { own: [...READ_WRITE, ...DB_ADMIN, ...USER_ADMIN] },
  // A role of every database, as in MongoDB, whose grant is the same wherever it is held.
  enableSharding: { anyNormal: ENABLE_SHARDING },
};

const ADMIN_ROLE_GRANTS: Record<string, Grant> = {
  readAnyDatabase: { anyNormal: READ, cluster: ['listDatabases'] },
  readWriteAnyDatabase: { anyNormal: READ_WRITE, cluster: ['listDatabases'] },
  dbAdminAnyDatabase: { anyNormal: DB_ADMIN, cluster: ['listDatabases'] },
  userAdminAnyDatabase: { anyNormal: USER_ADMIN, named: { config: USER_ADMIN, local: USER_ADMIN }, cluster: ['listDatabases', 'viewUser'] },
  clusterMonitor: { anyNormal: STATISTICS, named: MONITORED, cluster: CLUSTER_MONITOR },
  clusterManager: {
    anyNormal: CLUSTER_MANAGER_DB,
    named: { config: [...READ, ...CLUSTER_MANAGER_DB, ...CLUSTER_MANAGER_WRITES], local: [...CLUSTER_MANAGER_DB, ...CLUSTER_MANAGER_WRITES] },
    cluster: CLUSTER_MANAGER_CLUSTER,
  },
  clusterAdmin: {
    anyNormal: [...STATISTICS, ...CLUSTER_MANAGER_DB, 'dropDatabase', 'killCursors'],
    named: {
      config: [...new Set([...MONITORED.config, ...CLUSTER_MANAGER_DB, ...CLUSTER_MANAGER_WRITES])],
      local: [...new Set([...MONITORED.local, ...CLUSTER_MANAGER_DB, ...CLUSTER_MANAGER_WRITES])],
    },
    cluster: CLUSTER_ADMIN,
  },
};

// What every authenticated user may run (MongoDB checks no privilege for these): the handshake,
// authentication, sessions it opens itself, and the cursors it holds.
const ANY_AUTHENTICATED = new Set([
  'hello', 'isMaster', 'ismaster', 'saslStart', 'saslContinue', 'buildInfo', 'buildinfo', 'connectionStatus', 'ping', 'endSessions', 'startSession',
  'refreshSessions', 'listCommands', 'whatsmyuri', 'isdbgrid', 'getMore', 'killCursors', 'commitTransaction', 'abortTransaction',
]);

type Requirements = (cmd: Doc, db: string, authz: Authorization) => Requirement[];

function onCollection(...actions: string[]): Requirements {
  return (cmd, db) => [{ resource: collectionOf(cmd, db), actions }];
}

function onDatabase(...actions: string[]): Requirements {
  return (_cmd, db) => [{ resource: { kind: 'database', db }, actions }];
}

function onCluster(...actions: string[]): Requirements {
  return () => [{ resource: { kind: 'cluster' }, actions }];
}

// The command's first field names its collection; a number (aggregate: 1) means the database.
function collectionOf(cmd: Doc, db: string): Resource {
  const coll = Object.values(cmd)[0];
  return typeof coll === 'string' ? { kind: 'collection', db, coll } : { kind: 'database', db };
}

// A router's sharding commands name their target in the first field: a whole namespace, or a database.
function onNamespace(...actions: string[]): Requirements {
  return (cmd) => [{ resource: namespace(Object.values(cmd)[0]), actions }];
}

function onNamedDatabase(...actions: string[]): Requirements {
  return (cmd) => {
    const db = Object.values(cmd)[0];
    return [{ resource: { kind: 'database', db: typeof db === 'string' ? db : '' }, actions }];
  };
}

function namespace(ns: unknown): Resource {
  const s = typeof ns === 'string' ? ns : '';
  const dot = s.indexOf('.');
  return { kind: 'collection', db: s.slice(0, dot), coll: s.slice(dot + 1) };
}

// $out and $merge write into their target: MongoDB asks insert and remove of it ($merge also update).
function aggregateRequirements(cmd: Doc, db: string): Requirement[] {
  const out: Requirement[] = [{ resource: collectionOf(cmd, db), actions: ['find'] }];
  const pipeline = Array.isArray(cmd.pipeline) ? (cmd.pipeline as unknown[]) : [];
  for (const stage of pipeline) {
    if (stage === null || typeof stage !== 'object') continue;
    const s = stage as Doc;
    const target = s.$out ?? (s.$merge !== null && typeof s.$merge === 'object' ? (s.$merge as Doc).into : s.$merge);
    if (target === undefined) continue;
    const t = target !== null && typeof target === 'object' ? (target as Doc) : { coll: target };
    const resource: Resource = { kind: 'collection', db: typeof t.db === 'string' ? t.db : db, coll: typeof t.coll === 'string' ? t.coll : '' };
    out.push({ resource, actions: s.$merge !== undefined ? ['insert', 'remove', 'update'] : ['insert', 'remove'] });
  }
  return out;
}

// mapReduce reads its collection and, unless its output is inline, writes the output collection: a
// name or {replace} replaces it (insert, remove), {merge} and {reduce} also update it.
function mapReduceRequirements(cmd: Doc, db: string): Requirement[] {
  const out: Requirement[] = [{ resource: collectionOf(cmd, db), actions: ['find'] }];
  const spec = cmd.out;
  if (typeof spec === 'string') out.push({ resource: { kind: 'collection', db, coll: spec }, actions: ['insert', 'remove'] });
  else if (spec !== null && typeof spec === 'object' && !('inline' in spec)) {
    const o = spec as Doc;
    const mode = ['replace', 'merge', 'reduce'].find((m) => typeof o[m] === 'string');
    if (mode !== undefined) {
      const resource: Resource = { kind: 'collection', db: typeof o.db === 'string' ? o.db : db, coll: o[mode] as string };
      out.push({ resource, actions: mode === 'replace' ? ['insert', 'remove'] : ['insert', 'remove', 'update'] });
    }
  }
  return out;
}

function updateRequirements(cmd: Doc, db: string): Requirement[] {
  const updates = Array.isArray(cmd.updates) ? (cmd.updates as unknown[]) : [];
  const upsert = updates.some((u) => u !== null && typeof u === 'object' && (u as Doc).upsert === true);
  return [{ resource: collectionOf(cmd, db), actions: upsert ? ['update', 'insert'] : ['update'] }];
}

function findAndModifyRequirements(cmd: Doc, db: string): Requirement[] {
  const actions = cmd.remove === true ? ['find', 'remove'] : cmd.upsert === true ? ['find', 'update', 'insert'] : ['find', 'update'];
  return [{ resource: collectionOf(cmd, db), actions }];
}

// Each change updateUser makes asks its own action of the user's database.
// Each change updateUser makes asks its own action of the user's database; new roles ask
// grantRole on theirs, as createUser's do, and, since they replace roles of any database,
// revokeRole on every normal database (MongoDB's checkAuthForUpdateUserCommand).
function updateUserRequirements(cmd: Doc, db: string): Requirement[] {
  const actions = [
    ...(cmd.pwd !== undefined ? ['changePassword'] : []),
    ...(cmd.customData !== undefined ? ['changeCustomData'] : []),
  ];
  const roles: Requirement[] = cmd.roles === undefined ? [] : [{ resource: { kind: 'anyNormal' }, actions: ['revokeRole'] }, ...grantRequirements({ roles: cmd.roles }, db, 'grantRole')];
  return [{ resource: { kind: 'database', db }, actions }, ...roles];
}

// usersInfo of every database asks viewUser of the cluster, of a database's users viewUser there,
// and of named users viewUser on each one's database unless it is the caller itself.
function usersInfoRequirements(cmd: Doc, db: string, authz: Authorization): Requirement[] {
  const arg = cmd.usersInfo;
  if (arg !== null && typeof arg === 'object' && !Array.isArray(arg) && (arg as Doc).forAllDBs === true) return [{ resource: { kind: 'cluster' }, actions: ['viewUser'] }];
  if (typeof arg !== 'string' && !Array.isArray(arg) && !(arg !== null && typeof arg === 'object')) return [{ resource: { kind: 'database', db }, actions: ['viewUser'] }];
  return (Array.isArray(arg) ? (arg as unknown[]) : [arg]).flatMap((u): Requirement[] => {
    const name = typeof u === 'string' ? { user: u, db } : u !== null && typeof u === 'object' ? { user: (u as Doc).user, db: typeof (u as Doc).db === 'string' ? (u as Doc).db as string : db } : { user: undefined, db };
    return name.user === authz.user && name.db === authz.db ? [] : [{ resource: { kind: 'database', db: name.db }, actions: ['viewUser'] }];
  });
}

// rolesInfo of a database's roles asks viewRole there; of named roles, viewRole on each one's
// database unless the caller holds the role.
function rolesInfoRequirements(cmd: Doc, db: string, authz: Authorization): Requirement[] {
  const arg = cmd.rolesInfo;
  if (typeof arg !== 'string' && !Array.isArray(arg) && !(arg !== null && typeof arg === 'object')) return [{ resource: { kind: 'database', db }, actions: ['viewRole'] }];
  return (Array.isArray(arg) ? (arg as unknown[]) : [arg]).flatMap((r): Requirement[] => {
    const name = typeof r === 'string' ? { role: r, db } : r !== null && typeof r === 'object' ? { role: (r as Doc).role, db: typeof (r as Doc).db === 'string' ? (r as Doc).db as string : db } : { role: undefined, db };
    return authz.roles.some((h) => h.role === name.role && h.db === name.db) ? [] : [{ resource: { kind: 'database', db: name.db }, actions: ['viewRole'] }];
  });
}

// Within one database renameCollectionSameDB suffices; across databases the source is read and
// dropped and the target created, as MongoDB's rename_collection_common asks.
function renameRequirements(cmd: Doc): Requirement[] {
  const from = namespace(cmd.renameCollection);
  const to = namespace(cmd.to);
  if (from.kind === 'collection' && to.kind === 'collection' && from.db === to.db) {
    const same: Requirement[] = [{ resource: { kind: 'database', db: from.db }, actions: ['renameCollectionSameDB'] }];
    return cmd.dropTarget === true ? [...same, { resource: to, actions: ['dropCollection'] }] : same;
  }
  return [
    { resource: from, actions: ['find', 'dropCollection'] },
    { resource: to, actions: cmd.dropTarget === true ? ['insert', 'createIndex', 'dropCollection'] : ['insert', 'createIndex'] },
  ];
}

// Granting a role asks `action` on the role's database; granting a privilege, on the database it
// targets, or on admin for one of the cluster or of every database (MongoDB's
// checkAuthorizedToGrantPrivilege). Malformed entries are the command's to refuse.
function grantRequirements(cmd: Doc, db: string, action: string): Requirement[] {
  const dbs = new Set<string>();
  for (const r of Array.isArray(cmd.roles) ? (cmd.roles as unknown[]) : []) {
    dbs.add(r !== null && typeof r === 'object' && typeof (r as Doc).db === 'string' ? (r as Doc).db as string : db);
  }
  for (const p of Array.isArray(cmd.privileges) ? (cmd.privileges as unknown[]) : []) {
    const resource = p !== null && typeof p === 'object' ? (p as Doc).resource : undefined;
    const target = resource !== null && typeof resource === 'object' ? (resource as Doc).db : undefined;
    dbs.add(typeof target === 'string' && target !== '' ? target : 'admin');
  }
  return [...dbs].map((d) => ({ resource: { kind: 'database', db: d }, actions: [action] }));
}

// Each command a node answers to users and what it needs. Anything not here is root's alone.
const COMMAND_REQUIREMENTS: Record<string, Requirements> = {
  find: onCollection('find'),
  count: onCollection('find'),
  distinct: onCollection('find'),
  aggregate: aggregateRequirements,
  mapReduce: mapReduceRequirements,
  mapreduce: mapReduceRequirements,
  insert: onCollection('insert'),
  update: updateRequirements,
  delete: onCollection('remove'),
  findAndModify: findAndModifyRequirements,
  findandmodify: findAndModifyRequirements,
  create: onCollection('createCollection'),
  drop: onCollection('dropCollection'),
  dropDatabase: onDatabase('dropDatabase'),
  listCollections: onDatabase('listCollections'),
  // Without listDatabases a user is answered the databases it may use (authorizedDatabases.ts),
  // unless it asks for all of them.
  listDatabases: (cmd) => (cmd.authorizedDatabases === false ? [{ resource: { kind: 'cluster' }, actions: ['listDatabases'] }] : []),
  renameCollection: renameRequirements,
  createIndexes: onCollection('createIndex'),
  dropIndexes: onCollection('dropIndex'),
  deleteIndexes: onCollection('dropIndex'),
  listIndexes: onCollection('listIndexes'),
  collStats: onCollection('collStats'),
  dbStats: onDatabase('dbStats'),
  collMod: onCollection('collMod'),
  validate: onCollection('validate'),
  // A user's roles are granted as a role's are: grantRole (revokeRole) on each one's database.
  createUser: (cmd, db) => [{ resource: { kind: 'database', db }, actions: ['createUser'] }, ...grantRequirements({ roles: cmd.roles }, db, 'grantRole')],
  dropUser: onDatabase('dropUser'),
  usersInfo: usersInfoRequirements,
  updateUser: updateUserRequirements,
  grantRolesToUser: (cmd, db) => grantRequirements({ roles: cmd.roles }, db, 'grantRole'),
  revokeRolesFromUser: (cmd, db) => grantRequirements({ roles: cmd.roles }, db, 'revokeRole'),
  rolesInfo: rolesInfoRequirements,
  // Role commands, as MongoDB's checkAuthFor*RoleCommand ask: the command's own action on the
  // role's database, and grantRole (revokeRole) on what is given (taken away).
  createRole: (cmd, db) => [{ resource: { kind: 'database', db }, actions: ['createRole'] }, ...grantRequirements(cmd, db, 'grantRole')],
  updateRole: (cmd, db) => [{ resource: { kind: 'database', db }, actions: ['createRole', 'dropRole'] }, ...grantRequirements(cmd, db, 'grantRole')],
  dropRole: onDatabase('dropRole'),
  dropAllRolesFromDatabase: onDatabase('dropRole'),
  grantRolesToRole: (cmd, db) => grantRequirements(cmd, db, 'grantRole'),
  grantPrivilegesToRole: (cmd, db) => grantRequirements(cmd, db, 'grantRole'),
  revokeRolesFromRole: (cmd, db) => grantRequirements(cmd, db, 'revokeRole'),
  revokePrivilegesFromRole: (cmd, db) => grantRequirements(cmd, db, 'revokeRole'),
  serverStatus: onCluster('serverStatus'),
  profile: onDatabase('enableProfiler'),
  getCmdLineOpts: onCluster('getCmdLineOpts'),
  getLog: onCluster('getLog'),
  getParameter: onCluster('getParameter'),
  setParameter: onCluster('setParameter'),
  hostInfo: onCluster('hostInfo'),
  currentOp: onCluster('inprog'),
  cleanupOrphaned: onCluster('cleanupOrphaned'),
  // A router's own commands, with the actions mongos asks of them.
  listShards: onCluster('listShards'),
  addShard: onCluster('addShard'),
  removeShard: onCluster('removeShard'),
  flushRouterConfig: onCluster('flushRouterConfig'),
  killOp: onCluster('killop'),
  checkMetadataConsistency: onCluster('checkMetadataConsistency'),
  enableSharding: onNamedDatabase('enableSharding'),
  movePrimary: onNamedDatabase('moveChunk'),
  shardCollection: onNamespace('enableSharding'),
  analyzeShardKey: onNamespace('analyzeShardKey'),
  configureQueryAnalyzer: onNamespace('configureQueryAnalyzer'),
  split: onNamespace('splitChunk'),
  mergeChunks: onNamespace('splitChunk'),
  moveChunk: onNamespace('moveChunk'),
  moveRange: onNamespace('moveChunk'),
  reshardCollection: onNamespace('reshardCollection'),
  abortReshardCollection: onNamespace('reshardCollection'),
  commitReshardCollection: onNamespace('reshardCollection'),
  moveCollection: onNamespace('moveCollection'),
  unshardCollection: onNamespace('unshardCollection'),
  abortMoveCollection: onNamespace('moveCollection'),
  abortUnshardCollection: onNamespace('unshardCollection'),
  clearJumboFlag: onNamespace('clearJumboFlag'),
  getShardVersion: onNamespace('getShardVersion'),
  dataSize: onNamespace('find'),
};

function requirementsOf(name: string, cmd: Doc, db: string, authz: Authorization): Requirement[] | undefined {
  if (name === 'explain') {
    const inner = cmd.explain;
    if (inner === null || typeof inner !== 'object') return undefined;
    const innerName = Object.keys(inner)[0] ?? '';
    return innerName === 'explain' ? undefined : requirementsOf(innerName, inner as Doc, db, authz);
  }
  return COMMAND_REQUIREMENTS[name]?.(cmd, db, authz);
}

function grantOf(role: RoleName): Grant | undefined {
  if (role.db === 'admin' && Object.hasOwn(ADMIN_ROLE_GRANTS, role.role)) return ADMIN_ROLE_GRANTS[role.role];
  return Object.hasOwn(DATABASE_ROLE_GRANTS, role.role) ? DATABASE_ROLE_GRANTS[role.role] : undefined;
}

function grants(role: RoleName, resource: Resource, action: string): boolean {
  const grant = grantOf(role);
  if (grant === undefined) return false;
  if (resource.kind === 'cluster') return grant.cluster?.includes(action) === true;
  if (resource.kind === 'anyNormal') return grant.anyNormal?.includes(action) === true;
  if (resource.kind === 'collection' && resource.coll.startsWith('system.')) return false;
  const db = resource.db;
  return (role.db === db && grant.own?.includes(action) === true)
    || (db !== 'local' && db !== 'config' && grant.anyNormal?.includes(action) === true)
    || (Object.hasOwn(grant.named ?? {}, db) && grant.named?.[db]?.includes(action) === true);
}

function isRoot(roles: readonly RoleName[]): boolean {
  return roles.some((r) => r.db === 'admin' && (r.role === 'root' || r.role === '__system'));
}

// Whether a privilege's resource pattern covers a resource, as MongoDB's resource search list
// decides: a collection is matched by anyResource, by its exact namespace and by a pattern naming
// its collection in any database, and, unless it is a system collection, by its database and by
// any normal resource (not in local or config); a database by anyResource, by itself and by any
// normal resource (not local or config); the cluster by anyResource and by the cluster.
function covers(pattern: ResourcePattern, resource: Resource): boolean {
  if ('anyResource' in pattern) return true;
  if ('cluster' in pattern) return resource.kind === 'cluster';
  if (resource.kind === 'cluster') return false;
  if (resource.kind === 'anyNormal') return pattern.db === '' && pattern.collection === '';
  const normalDb = resource.db !== 'local' && resource.db !== 'config';
  if (resource.kind === 'database') return pattern.collection === '' && (pattern.db === resource.db || (pattern.db === '' && normalDb));
  if (pattern.collection !== '' && pattern.collection === resource.coll) return pattern.db === '' || pattern.db === resource.db;
  if (pattern.collection !== '' || resource.coll.startsWith('system.')) return false;
  return pattern.db === resource.db || (pattern.db === '' && normalDb);
}

function granted(authz: Authorization, resource: Resource, action: string): boolean {
  return authz.roles.some((role) => grants(role, resource, action))
    || (authz.privileges ?? []).some((p) => (p.actions.includes(action) || p.actions.includes('anyAction')) && covers(p.resource, resource));
}

// Undefined when the roles allow the command; otherwise MongoDB's Unauthorized, naming the
// command's database and the command as sent.
export function checkAuthorization(authz: Authorization, name: string, db: string, cmd: Doc): MongoError | undefined {
  if (ANY_AUTHENTICATED.has(name) || isRoot(authz.roles)) return undefined;
  const required = requirementsOf(name, cmd, db, authz);
  const allowed = required !== undefined && required.every((r) => r.actions.every((action) => granted(authz, r.resource, action)));
  return allowed ? undefined : new MongoError(ErrorCodes.Unauthorized, `not authorized on ${db} to execute command ${formatValue(redactedForLog(name, cmd))}`);
}

// Whether the roles grant any action on a database or its collections: MongoDB's authorized
// databases, which listDatabases answers a user who may not list them all.
export function mayUseDatabase(authz: Authorization, db: string): boolean {
  if (isRoot(authz.roles)) return true;
  const normalDb = db !== 'local' && db !== 'config';
  return authz.roles.some((role) => {
    const grant = grantOf(role);
    if (grant === undefined) return false;
    return (role.db === db && (grant.own?.length ?? 0) > 0)
      || (normalDb && (grant.anyNormal?.length ?? 0) > 0)
      || Object.hasOwn(grant.named ?? {}, db);
  }) || (authz.privileges ?? []).some(({ resource: r }) => 'anyResource' in r || ('db' in r && (r.db === db || (r.db === '' && (r.collection !== '' || normalDb)))));
}

export function mayListAllDatabases(authz: Authorization): boolean {
  return isRoot(authz.roles) || granted(authz, { kind: 'cluster' }, 'listDatabases');
}

// Whether the roles may kill another user's cursors (clusterAdmin's killAnyCursor, and root).
export function mayKillAnyCursor(authz: Authorization): boolean {
  return isRoot(authz.roles) || granted(authz, { kind: 'cluster' }, 'killAnyCursor');
}

// A built-in role's privileges in MongoDB's shape, as rolesInfo shows them: its own database's
// actions on {db, collection: ''}, every normal database's on {db: '', collection: ''}, a named
// database's on {db: name, collection: ''}, the cluster's on {cluster: true}. root and __system
// hold every action on every resource (this server lets them run everything).
export function builtinRolePrivileges(role: RoleName): Privilege[] {
  if (isRoot([role])) return [{ resource: { anyResource: true }, actions: ['anyAction'] }];
  const grant = grantOf(role);
  if (grant === undefined) return [];
  const out: Privilege[] = [];
  if (grant.own !== undefined) out.push({ resource: { db: role.db, collection: '' }, actions: [...grant.own] });
  if (grant.anyNormal !== undefined) out.push({ resource: { db: '', collection: '' }, actions: [...grant.anyNormal] });
  for (const [db, actions] of Object.entries(grant.named ?? {})) out.push({ resource: { db, collection: '' }, actions: [...actions] });
  if (grant.cluster !== undefined) out.push({ resource: { cluster: true }, actions: [...grant.cluster] });
  return out;
}

// A password never goes back in a message or into the log: MongoDB's user commands print it as
// "xxx".
export function redactedForLog(name: string, cmd: Doc): Doc {
  return (name === 'createUser' || name === 'updateUser') && cmd.pwd !== undefined ? { ...cmd, pwd: 'xxx' } : cmd;
}
