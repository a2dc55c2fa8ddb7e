import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { formatValue } from '../bson/format.js';
import type { RoleName } from './users.js';

// Whether a connection's built-in roles let it run one command, as MongoDB's authorization checks
// decide it: each command needs actions on a resource (a collection, a database or the cluster),
// and each role grants actions on resources (builtin_roles.yml). Pure: the caller passes what the
// connection proved and the command; a refusal is the MongoError to answer.

type Resource = { kind: 'collection'; db: string; coll: string } | { kind: 'database'; db: string } | { kind: 'cluster' };

interface Requirement { resource: Resource; actions: readonly string[] }

// What a role grants: actions on its own database (or on every database for the AnyDatabase roles)
// and on the cluster. System collections (system.*) are outside every grant but root's, as MongoDB's
// "normal resources" leave them out.
interface Grant { database: readonly string[]; anyDatabase: boolean; cluster: readonly string[] }

const READ = ['find', 'listCollections', 'listIndexes', 'collStats', 'dbStats', 'dbHash', 'killCursors', 'changeStream', 'listSearchIndexes'];
const READ_WRITE = [...READ, 'insert', 'update', 'remove', 'createCollection', 'createIndex', 'dropCollection', 'dropIndex', 'renameCollectionSameDB', 'convertToCapped'];
const DB_ADMIN = [
  'bypassDocumentValidation', 'collMod', 'collStats', 'compact', 'createCollection', 'createIndex', 'dbStats', 'dropCollection', 'dropDatabase',
  'dropIndex', 'enableProfiler', 'listCollections', 'listIndexes', 'planCacheRead', 'planCacheWrite', 'reIndex', 'renameCollectionSameDB', 'validate',
];
const USER_ADMIN = [
  'changeCustomData', 'changePassword', 'createRole', 'createUser', 'dropRole', 'dropUser', 'grantRole', 'revokeRole', 'setAuthenticationRestriction',
  'viewRole', 'viewUser',
];
const CLUSTER_MONITOR = [
  'checkMetadataConsistency', 'connPoolStats', 'getCmdLineOpts', 'getLog', 'getParameter', 'getShardMap', 'hostInfo', 'inprog', 'listDatabases',
  'listSessions', 'listShards', 'netstat', 'serverStatus', 'top',
];
const CLUSTER_ADMIN = [...CLUSTER_MONITOR, 'cleanupOrphaned', 'splitVector', 'killop', 'setParameter', 'shutdown', 'flushRouterConfig', 'moveChunk', 'splitChunk'];

const DATABASE_ROLE_GRANTS: Record<string, Grant> = {
  read: { database: READ, anyDatabase: false, cluster: [] },
  readWrite: { database: READ_WRITE, anyDatabase: false, cluster: [] },
  dbAdmin: { database: DB_ADMIN, anyDatabase: false, cluster: [] },
  userAdmin: { database: USER_ADMIN, anyDatabase: false, cluster: [] },
  dbOwner: { database: [...READ_WRITE, ...DB_ADMIN, ...USER_ADMIN], anyDatabase: false, cluster: [] },
};

// The roles that exist only on admin and reach past it. clusterMonitor's and clusterAdmin's
// statistics on every database are collStats and dbStats; clusterAdmin may drop any database.
const ADMIN_ROLE_GRANTS: Record<string, Grant> = {
  readAnyDatabase: { database: READ, anyDatabase: true, cluster: ['listDatabases'] },
  readWriteAnyDatabase: { database: READ_WRITE, anyDatabase: true, cluster: ['listDatabases'] },
  dbAdminAnyDatabase: { database: DB_ADMIN, anyDatabase: true, cluster: ['listDatabases'] },
  userAdminAnyDatabase: { database: USER_ADMIN, anyDatabase: true, cluster: ['listDatabases'] },
  clusterMonitor: { database: ['collStats', 'dbStats'], anyDatabase: true, cluster: CLUSTER_MONITOR },
  clusterAdmin: { database: ['collStats', 'dbStats', 'dropDatabase'], anyDatabase: true, cluster: CLUSTER_ADMIN },
};

// What every authenticated user may run (MongoDB checks no privilege for these): the handshake,
// authentication, sessions it opens itself, and the cursors it holds.
const ANY_AUTHENTICATED = new Set([
  'hello', 'isMaster', 'ismaster', 'saslStart', 'saslContinue', 'buildInfo', 'buildinfo', 'connectionStatus', 'ping', 'endSessions', 'startSession',
  'refreshSessions', 'listCommands', 'whatsmyuri', 'getMore', 'killCursors', 'commitTransaction', 'abortTransaction',
]);

type Requirements = (cmd: Doc, db: string) => Requirement[];

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

function updateRequirements(cmd: Doc, db: string): Requirement[] {
  const updates = Array.isArray(cmd.updates) ? (cmd.updates as unknown[]) : [];
  const upsert = updates.some((u) => u !== null && typeof u === 'object' && (u as Doc).upsert === true);
  return [{ resource: collectionOf(cmd, db), actions: upsert ? ['update', 'insert'] : ['update'] }];
}

function findAndModifyRequirements(cmd: Doc, db: string): Requirement[] {
  const actions = cmd.remove === true ? ['find', 'remove'] : cmd.upsert === true ? ['find', 'update', 'insert'] : ['find', 'update'];
  return [{ resource: collectionOf(cmd, db), actions }];
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

// Each command a node answers to users and what it needs. Anything not here is root's alone.
const COMMAND_REQUIREMENTS: Record<string, Requirements> = {
  find: onCollection('find'),
  count: onCollection('find'),
  distinct: onCollection('find'),
  aggregate: aggregateRequirements,
  insert: onCollection('insert'),
  update: updateRequirements,
  delete: onCollection('remove'),
  findAndModify: findAndModifyRequirements,
  findandmodify: findAndModifyRequirements,
  create: onCollection('createCollection'),
  drop: onCollection('dropCollection'),
  dropDatabase: onDatabase('dropDatabase'),
  listCollections: onDatabase('listCollections'),
  listDatabases: onCluster('listDatabases'),
  renameCollection: renameRequirements,
  createIndexes: onCollection('createIndex'),
  dropIndexes: onCollection('dropIndex'),
  deleteIndexes: onCollection('dropIndex'),
  listIndexes: onCollection('listIndexes'),
  collStats: onCollection('collStats'),
  dbStats: onDatabase('dbStats'),
  collMod: onCollection('collMod'),
  validate: onCollection('validate'),
  createUser: onDatabase('createUser'),
  dropUser: onDatabase('dropUser'),
  usersInfo: onDatabase('viewUser'),
  serverStatus: onCluster('serverStatus'),
  getCmdLineOpts: onCluster('getCmdLineOpts'),
  getLog: onCluster('getLog'),
  getParameter: onCluster('getParameter'),
  hostInfo: onCluster('hostInfo'),
  currentOp: onCluster('inprog'),
  cleanupOrphaned: onCluster('cleanupOrphaned'),
};

function requirementsOf(name: string, cmd: Doc, db: string): Requirement[] | undefined {
  if (name === 'explain') {
    const inner = cmd.explain;
    if (inner === null || typeof inner !== 'object') return undefined;
    const innerName = Object.keys(inner)[0] ?? '';
    return innerName === 'explain' ? undefined : requirementsOf(innerName, inner as Doc, db);
  }
  return COMMAND_REQUIREMENTS[name]?.(cmd, db);
}

function grantOf(role: RoleName): Grant | undefined {
  if (role.db === 'admin' && Object.hasOwn(ADMIN_ROLE_GRANTS, role.role)) return ADMIN_ROLE_GRANTS[role.role];
  return Object.hasOwn(DATABASE_ROLE_GRANTS, role.role) ? DATABASE_ROLE_GRANTS[role.role] : undefined;
}

function grants(role: RoleName, resource: Resource, action: string): boolean {
  const grant = grantOf(role);
  if (grant === undefined) return false;
  if (resource.kind === 'cluster') return grant.cluster.includes(action);
  if (resource.kind === 'collection' && resource.coll.startsWith('system.')) return false;
  return (grant.anyDatabase || role.db === resource.db) && grant.database.includes(action);
}

function isRoot(roles: readonly RoleName[]): boolean {
  return roles.some((r) => r.db === 'admin' && (r.role === 'root' || r.role === '__system'));
}

// Undefined when the roles allow the command; otherwise MongoDB's Unauthorized, naming the
// command's database and the command as sent.
export function checkAuthorization(roles: readonly RoleName[], name: string, db: string, cmd: Doc): MongoError | undefined {
  if (ANY_AUTHENTICATED.has(name) || isRoot(roles)) return undefined;
  const required = requirementsOf(name, cmd, db);
  const allowed = required !== undefined && required.every((r) => r.actions.every((action) => roles.some((role) => grants(role, r.resource, action))));
  return allowed ? undefined : new MongoError(ErrorCodes.Unauthorized, `not authorized on ${db} to execute command ${formatValue(cmd)}`);
}
