import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAuthorization, mayKillAnyCursor, mayListAllDatabases, mayUseDatabase } from './authorization_policy.js';
import type { Privilege } from './roles.js';
import type { RoleName } from './users.js';

const role = (name: string, db: string): RoleName => ({ role: name, db });
const allowed = (roles: RoleName[], cmd: Record<string, unknown>, db = 'app'): boolean =>
  checkAuthorization({ roles }, Object.keys(cmd)[0]!, db, { ...cmd, $db: db }) === undefined;

test('read finds, counts and lists in its database but writes nothing', () => {
  const read = [role('read', 'app')];
  assert.ok(allowed(read, { find: 'c', filter: {} }));
  assert.ok(allowed(read, { count: 'c' }));
  assert.ok(allowed(read, { aggregate: 'c', pipeline: [], cursor: {} }));
  assert.ok(allowed(read, { listCollections: 1 }));
  assert.ok(allowed(read, { listIndexes: 'c' }));
  assert.ok(!allowed(read, { insert: 'c', documents: [{}] }));
  assert.ok(!allowed(read, { delete: 'c', deletes: [] }));
  assert.ok(!allowed(read, { aggregate: 'c', pipeline: [{ $out: 'd' }], cursor: {} }));
  assert.ok(!allowed(read, { createIndexes: 'c', indexes: [] }));
  assert.ok(allowed(read, { mapReduce: 'c', map: 'f', reduce: 'g', out: { inline: 1 } }));
  assert.ok(!allowed(read, { mapReduce: 'c', map: 'f', reduce: 'g', out: 'd' }));
  assert.ok(!allowed(read, { mapReduce: 'c', map: 'f', reduce: 'g', out: { merge: 'd', db: 'app' } }));
  assert.ok(allowed([role('read', 'app'), role('readWrite', 'other')], { mapReduce: 'c', map: 'f', reduce: 'g', out: { reduce: 'd', db: 'other' } }));
});

test('the refusal is Unauthorized naming the database and the command as sent', () => {
  const err = checkAuthorization({ roles: [role('read', 'app')] }, 'insert', 'app', { insert: 'c', ordered: true, $db: 'app' });
  assert.equal(err?.code, 13);
  assert.equal(err?.message, 'not authorized on app to execute command { insert: "c", ordered: true, $db: "app" }');
});

test('a database role reaches only its own database, an AnyDatabase role every one', () => {
  assert.ok(allowed([role('readWrite', 'a')], { insert: 'c', documents: [] }, 'a'));
  assert.ok(!allowed([role('readWrite', 'a')], { find: 'c' }, 'b'));
  assert.ok(allowed([role('readAnyDatabase', 'admin')], { find: 'c' }, 'b'));
  assert.ok(!allowed([role('readAnyDatabase', 'admin')], { insert: 'c', documents: [] }, 'b'));
  assert.ok(allowed([role('readWriteAnyDatabase', 'admin')], { update: 'c', updates: [{ q: {}, u: {}, upsert: true }] }, 'b'));
  assert.ok(!allowed([role('readAnyDatabase', 'x')], { find: 'c' }, 'x'), 'an admin-only role elsewhere grants nothing');
});

test('the AnyDatabase roles leave local and config out; clusterMonitor reads them', () => {
  assert.ok(!allowed([role('readAnyDatabase', 'admin')], { find: 'c' }, 'config'));
  assert.ok(!allowed([role('readWriteAnyDatabase', 'admin')], { insert: 'c', documents: [] }, 'local'));
  assert.ok(allowed([role('userAdminAnyDatabase', 'admin')], { createUser: 'u', pwd: 'p', roles: [] }, 'config'));
  assert.ok(allowed([role('clusterMonitor', 'admin')], { find: 'chunks' }, 'config'));
  assert.ok(!allowed([role('clusterMonitor', 'admin')], { insert: 'chunks', documents: [] }, 'config'));
  assert.ok(allowed([role('clusterAdmin', 'admin')], { insert: 'chunks', documents: [] }, 'config'));
});

test('a refused createUser does not echo its password', () => {
  const err = checkAuthorization({ roles: [role('read', 'app')] }, 'createUser', 'app', { createUser: 'u', pwd: 'secret', roles: ['read'], $db: 'app' });
  assert.equal(err?.message, 'not authorized on app to execute command { createUser: "u", pwd: "xxx", roles: [ "read" ], $db: "app" }');
});

test('upserts also need insert; findAndModify needs find', () => {
  const updateOnly = [role('readWrite', 'app')];
  assert.ok(allowed(updateOnly, { findAndModify: 'c', query: {}, update: {}, upsert: true }));
  assert.ok(!allowed([role('read', 'app')], { findAndModify: 'c', query: {}, remove: true }));
});

test('userAdmin manages users but reads no data; dbAdmin manages collections but reads no data', () => {
  const userAdmin = [role('userAdmin', 'app')];
  assert.ok(allowed(userAdmin, { createUser: 'u', pwd: 'p', roles: [] }));
  assert.ok(allowed(userAdmin, { usersInfo: 1 }));
  assert.ok(!allowed(userAdmin, { find: 'c' }));
  assert.ok(allowed([role('userAdminAnyDatabase', 'admin')], { dropUser: 'u' }, 'other'));
  const dbAdmin = [role('dbAdmin', 'app')];
  assert.ok(allowed(dbAdmin, { collMod: 'c' }));
  assert.ok(allowed(dbAdmin, { dropDatabase: 1 }));
  assert.ok(!allowed(dbAdmin, { find: 'c' }));
  assert.ok(!allowed([role('readWrite', 'app')], { collMod: 'c' }));
  assert.ok(allowed([role('dbOwner', 'app')], { collMod: 'c' }));
  assert.ok(allowed([role('dbOwner', 'app')], { createUser: 'u', pwd: 'p', roles: [] }));
  assert.ok(allowed([role('dbAdminAnyDatabase', 'admin')], { validate: 'c' }, 'other'));
});

test('cluster actions belong to the cluster roles; clusterMonitor reads no data', () => {
  assert.ok(allowed([role('clusterMonitor', 'admin')], { serverStatus: 1 }, 'admin'));
  assert.ok(allowed([role('clusterMonitor', 'admin')], { dbStats: 1 }, 'app'));
  assert.ok(!allowed([role('clusterMonitor', 'admin')], { find: 'c' }, 'app'));
  assert.ok(!allowed([role('clusterMonitor', 'admin')], { cleanupOrphaned: 'app.c' }, 'admin'));
  assert.ok(allowed([role('clusterAdmin', 'admin')], { cleanupOrphaned: 'app.c' }, 'admin'));
  assert.ok(!allowed([role('readWriteAnyDatabase', 'admin')], { serverStatus: 1 }, 'admin'));
  assert.ok(allowed([role('readAnyDatabase', 'admin')], { listDatabases: 1 }, 'admin'));
  // Narrowed to its databases rather than refused, unless it asks for all of them.
  assert.ok(allowed([role('read', 'app')], { listDatabases: 1 }, 'admin'));
  assert.ok(!allowed([role('read', 'app')], { listDatabases: 1, authorizedDatabases: false }, 'admin'));
  assert.ok(allowed([role('readAnyDatabase', 'admin')], { listDatabases: 1, authorizedDatabases: false }, 'admin'));
});

test('enableSharding (of any database), clusterManager and clusterAdmin move, unshard and reshard collections and abort them', () => {
  const sharding = [[role('enableSharding', 'app')], [role('enableSharding', 'admin')], [role('clusterManager', 'admin')], [role('clusterAdmin', 'admin')]];
  const cmds = [
    { moveCollection: 'app.c', toShard: 's1' }, { unshardCollection: 'app.c' }, { abortMoveCollection: 'app.c' }, { abortUnshardCollection: 'app.c' },
    { reshardCollection: 'app.c', key: { k: 1 } }, { abortReshardCollection: 'app.c' }, { commitReshardCollection: 'app.c' }, { shardCollection: 'app.c', key: { k: 1 } },
    { enableSharding: 'app' },
  ];
  for (const roles of sharding) {
    for (const cmd of cmds) assert.ok(allowed(roles, cmd, 'admin'), `${roles[0]!.role} runs ${Object.keys(cmd)[0]}`);
    assert.ok(!allowed(roles, { moveCollection: 'app.system.views', toShard: 's1' }, 'admin'), 'not a system collection');
  }
  for (const roles of [[role('dbOwner', 'app')], [role('readWriteAnyDatabase', 'admin')], [role('clusterMonitor', 'admin')], [role('clusterManager', 'app')]]) {
    for (const cmd of cmds) assert.ok(!allowed(roles, cmd, 'admin'), `${roles[0]!.role}@${roles[0]!.db} does not run ${Object.keys(cmd)[0]}`);
  }
  // enableSharding moves collections but reads and splits nothing; clusterManager writes config.
  assert.ok(!allowed([role('enableSharding', 'app')], { find: 'c' }));
  assert.ok(!allowed([role('enableSharding', 'app')], { split: 'app.c', middle: { k: 1 } }, 'admin'));
  assert.ok(allowed([role('clusterManager', 'admin')], { split: 'app.c', middle: { k: 1 } }, 'admin'));
  assert.ok(allowed([role('clusterManager', 'admin')], { insert: 'settings', documents: [] }, 'config'));
  assert.ok(allowed([role('clusterManager', 'admin')], { listShards: 1 }, 'admin'));
  assert.ok(!allowed([role('clusterManager', 'admin')], { serverStatus: 1 }, 'admin'));
  assert.ok(!allowed([role('clusterManager', 'admin')], { find: 'c' }));
});

test('renames: within a database readWrite suffices, across databases both sides are checked', () => {
  const rw = [role('readWrite', 'a')];
  assert.ok(allowed(rw, { renameCollection: 'a.x', to: 'a.y' }, 'admin'));
  assert.ok(!allowed(rw, { renameCollection: 'a.x', to: 'b.y' }, 'admin'));
  assert.ok(allowed([...rw, role('readWrite', 'b')], { renameCollection: 'a.x', to: 'b.y' }, 'admin'));
});

test('explain needs what the explained command needs', () => {
  assert.ok(allowed([role('read', 'app')], { explain: { find: 'c' } }));
  assert.ok(!allowed([role('read', 'app')], { explain: { delete: 'c', deletes: [] } }));
});

test('system collections, internal and unknown commands are root\'s alone', () => {
  assert.ok(!allowed([role('readAnyDatabase', 'admin')], { find: 'system.users' }, 'admin'));
  assert.ok(!allowed([role('dbOwner', 'app')], { _shardsvrMoveRange: 'app.c' }, 'admin'));
  assert.ok(!allowed([role('clusterAdmin', 'admin')], { configureFailPoint: 'x' }, 'admin'));
  assert.ok(!allowed([role('readWrite', 'app')], { killSessions: [] }));
  const root = [role('root', 'admin')];
  for (const cmd of [{ find: 'system.users' }, { insert: 'c' }, { _shardsvrMoveRange: 'app.c' }, { serverStatus: 1 }, { createUser: 'u' }]) {
    assert.ok(allowed(root, cmd), JSON.stringify(cmd));
  }
  assert.ok(!allowed([role('root', 'app')], { insert: 'c' }), 'root exists on admin only');
});

test('the handshake, authentication, sessions and cursors need no role', () => {
  for (const name of ['hello', 'isMaster', 'saslStart', 'saslContinue', 'buildInfo', 'connectionStatus', 'ping', 'endSessions', 'getMore', 'killCursors']) {
    assert.ok(allowed([], { [name]: 1 }), name);
  }
});

test('the databases a user may use are those its roles grant anything on; listing all is listDatabases', () => {
  const roles = [role('read', 'a'), role('userAdmin', 'b')];
  assert.deepEqual(['a', 'b', 'c', 'admin', 'config', 'local'].filter((db) => mayUseDatabase({ roles }, db)), ['a', 'b']);
  assert.deepEqual(['a', 'admin', 'config', 'local'].filter((db) => mayUseDatabase({ roles: [role('readAnyDatabase', 'admin')] }, db)), ['a', 'admin']);
  assert.deepEqual(['a', 'config', 'local'].filter((db) => mayUseDatabase({ roles: [role('clusterMonitor', 'admin')] }, db)), ['a', 'config', 'local']);
  assert.ok(['a', 'local'].every((db) => mayUseDatabase({ roles: [role('root', 'admin')] }, db)));
  assert.ok(!mayListAllDatabases({ roles }));
  assert.ok(mayListAllDatabases({ roles: [role('readWriteAnyDatabase', 'admin')] }));
  assert.ok(mayListAllDatabases({ roles: [role('clusterMonitor', 'admin')] }));
});

test("only clusterAdmin and root kill other users' cursors", () => {
  assert.ok(mayKillAnyCursor({ roles: [role('clusterAdmin', 'admin')] }));
  assert.ok(mayKillAnyCursor({ roles: [role('root', 'admin')] }));
  assert.ok(!mayKillAnyCursor({ roles: [role('readWriteAnyDatabase', 'admin'), role('dbOwner', 'a')] }));
});

test("a user-defined role's privileges match as MongoDB's resource patterns do", () => {
  const on = (resource: Privilege['resource'], ...actions: string[]): boolean[] => [
    { find: 'c' }, { find: 'system.js' }, { find: 'c', $db: 'other' }, { find: 'c', $db: 'config' }, { listCollections: 1 },
  ].map(({ $db, ...cmd }) => checkAuthorization({ roles: [], privileges: [{ resource, actions }] }, Object.keys(cmd)[0]!, ($db as string | undefined) ?? 'app', cmd) === undefined);
  assert.deepEqual(on({ db: 'app', collection: 'c' }, 'find'), [true, false, false, false, false]);
  assert.deepEqual(on({ db: 'app', collection: '' }, 'find', 'listCollections'), [true, false, false, false, true]);
  assert.deepEqual(on({ db: '', collection: 'c' }, 'find'), [true, false, true, true, false]);
  assert.deepEqual(on({ db: '', collection: '' }, 'find', 'listCollections'), [true, false, true, false, true]);
  assert.deepEqual(on({ db: 'app', collection: 'system.js' }, 'find'), [false, true, false, false, false]);
  assert.deepEqual(on({ anyResource: true }, 'anyAction'), [true, true, true, true, true]);
  assert.deepEqual(on({ cluster: true }, 'find'), [false, false, false, false, false]);
  assert.ok(checkAuthorization({ roles: [], privileges: [{ resource: { cluster: true }, actions: ['serverStatus'] }] }, 'serverStatus', 'admin', { serverStatus: 1 }) === undefined);
  assert.ok(mayUseDatabase({ roles: [], privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['find'] }] }, 'app'));
  assert.ok(!mayUseDatabase({ roles: [], privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['find'] }] }, 'other'));
});

test('the role commands ask grantRole of what they grant: the role\'s database, admin for the cluster', () => {
  const admin = [role('userAdmin', 'app')];
  assert.ok(allowed(admin, { createRole: 'r', privileges: [{ resource: { db: 'app', collection: '' }, actions: ['find'] }], roles: ['read'] }));
  assert.ok(!allowed(admin, { createRole: 'r', privileges: [{ resource: { cluster: true }, actions: ['serverStatus'] }], roles: [] }));
  assert.ok(!allowed(admin, { grantRolesToRole: 'r', roles: [{ role: 'read', db: 'other' }] }));
  assert.ok(allowed(admin, { revokePrivilegesFromRole: 'r', privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['find'] }] }));
  assert.ok(!allowed([role('read', 'app')], { dropRole: 'r' }));
});

test('granting a user a role asks grantRole on the role\'s database: a database\'s userAdmin cannot hand out root', () => {
  const admin = [role('userAdmin', 'app')];
  assert.ok(allowed(admin, { createUser: 'u', pwd: 'p', roles: ['read'] }));
  assert.ok(!allowed(admin, { createUser: 'u', pwd: 'p', roles: [{ role: 'root', db: 'admin' }] }));
  assert.ok(!allowed(admin, { grantRolesToUser: 'u', roles: [{ role: 'readWriteAnyDatabase', db: 'admin' }] }));
  // updateUser's roles replace roles of any database: revokeRole on every one is asked.
  assert.ok(!allowed(admin, { updateUser: 'u', roles: ['readWrite'] }));
  assert.ok(allowed(admin, { updateUser: 'u', pwd: 'p' }));
  assert.ok(allowed([role('userAdminAnyDatabase', 'admin')], { updateUser: 'u', roles: ['readWrite'] }));
  assert.ok(allowed(admin, { revokeRolesFromUser: 'u', roles: ['read'] }));
  assert.ok(allowed([role('userAdminAnyDatabase', 'admin')], { createUser: 'u', pwd: 'p', roles: [{ role: 'root', db: 'admin' }] }, 'app'));
});

test('a user views itself and the roles it holds without viewUser or viewRole', () => {
  const self = { roles: [role('read', 'app')], user: 'me', db: 'admin' };
  const may = (cmd: Record<string, unknown>, db: string): boolean => checkAuthorization(self, Object.keys(cmd)[0]!, db, cmd) === undefined;
  assert.ok(may({ usersInfo: 'me' }, 'admin'));
  assert.ok(may({ usersInfo: { user: 'me', db: 'admin' } }, 'app'));
  assert.ok(!may({ usersInfo: 'other' }, 'admin'));
  assert.ok(!may({ usersInfo: 1 }, 'admin'));
  assert.ok(!may({ usersInfo: { forAllDBs: true } }, 'admin'));
  assert.ok(may({ rolesInfo: 'read' }, 'app'));
  assert.ok(!may({ rolesInfo: 'readWrite' }, 'app'));
  assert.ok(!may({ rolesInfo: 1 }, 'app'));
});
