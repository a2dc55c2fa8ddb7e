import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { as, refusal } from '../helpers/server_errors.js';
import { withNode, withProcesses } from '../helpers/fixtures.js';

// User-defined roles (createRole, updateRole, dropRole, grantRolesToRole, revokeRolesFromRole,
// grantPrivilegesToRole, revokePrivilegesFromRole, dropAllRolesFromDatabase, rolesInfo) through
// the official driver, on a node started with --auth and through routers whose roles live on the
// config server: stored in admin.system.roles in MongoDB's shape, answered with MongoDB's codes,
// and honoured by authorization, a change applying to connections already logged in.

function userUri(port: number, user: string, extra = ''): string {
  return `mongodb://${user}:pw@127.0.0.1:${port}/?authSource=admin&maxPoolSize=1${extra}`;
}

const finderPrivileges = [{ resource: { db: 'app', collection: 'c' }, actions: ['find'] }];

describe('user-defined roles on a node started with --auth', () => {
  let node: SpawnedNode;
  let root: MongoClient;
  withNode({ extraArgs: ['--auth'] }, async (f) => {
    node = f.node;
    await as(node.uri, (c) => c.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] }));
    root = await f.connect(userUri(node.port, 'root', '&directConnection=true')).connect();
    await root.db('app').collection('c').insertOne({ _id: 1 } as never);
    await root.db('app').collection('d').insertOne({ _id: 1 } as never);
  });

  it('createRole stores the role in admin.system.roles in MongoDB\'s shape and refuses what MongoDB refuses', async () => {
    const app = root.db('app');
    assert.equal((await app.command({ createRole: 'finder', privileges: [...finderPrivileges, { resource: { db: 'app', collection: 'c' }, actions: ['find', 'collStats'] }], roles: [] })).ok, 1);
    const doc = await root.db('admin').collection('system.roles').findOne({ _id: 'app.finder' as never });
    assert.deepEqual(doc, { _id: 'app.finder', role: 'finder', db: 'app', privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['find', 'collStats'] }], roles: [] });

    const duplicate = await refusal(() => app.command({ createRole: 'finder', privileges: [], roles: [] }));
    assert.equal(duplicate.code, 51002);
    assert.equal(duplicate.errmsg, 'Role "finder@app" already exists');
    const builtin = await refusal(() => app.command({ createRole: 'read', privileges: [], roles: [] }));
    assert.equal(builtin.code, 2);
    assert.equal(builtin.errmsg, 'Cannot create roles with the same name as a built-in role');
    const otherDb = await refusal(() => app.command({ createRole: 'x', privileges: [{ resource: { db: 'other', collection: '' }, actions: ['find'] }], roles: [] }));
    assert.equal(otherDb.code, 49);
    assert.equal(otherDb.codeName, 'InvalidRoleModification');
    const cluster = await refusal(() => app.command({ createRole: 'x', privileges: [{ resource: { cluster: true }, actions: ['serverStatus'] }], roles: [] }));
    assert.equal(cluster.code, 49);
    const action = await refusal(() => app.command({ createRole: 'x', privileges: [{ resource: { db: 'app', collection: '' }, actions: ['fly'] }], roles: [] }));
    assert.equal(action.code, 2);
    assert.equal(action.errmsg, 'Unrecognized action privilege strings: fly');
    const missing = await refusal(() => app.command({ createRole: 'x', privileges: [], roles: ['nothing'] }));
    assert.equal(missing.code, 31);
    assert.equal(missing.codeName, 'RoleNotFound');
    // Restrictions this server would not enforce are refused, not kept.
    const restricted = await refusal(() => app.command({ createRole: 'x', privileges: [], roles: [], authenticationRestrictions: [{ clientSource: ['10.0.0.0/8'] }] }));
    assert.equal(restricted.code, 2);
    const noRoles = await refusal(() => app.command({ createRole: 'x', privileges: [] }));
    assert.equal(noRoles.code, 40414);
    const unknownUserRole = await refusal(() => root.db('admin').command({ createUser: 'y', pwd: 'pw', roles: [{ role: 'nothing', db: 'app' }] }));
    assert.equal(unknownUserRole.code, 31);
    // dropRole takes no privileges (MongoDB refuses them with 40415).
    for (const cmd of [{ dropRole: 'nothing' }, { updateRole: 'nothing', privileges: finderPrivileges }, { grantPrivilegesToRole: 'nothing', privileges: finderPrivileges }]) {
      const err = await refusal(() => app.command(cmd));
      assert.equal(err.code, 31, Object.keys(cmd)[0]);
    }
    assert.deepEqual((await app.command({ rolesInfo: 'nothing' })).roles, []);
  });

  it('a user holding a user-defined role runs what its privileges grant, and a change applies to its open connection', async () => {
    await root.db('admin').command({ createUser: 'u', pwd: 'pw', roles: [{ role: 'finder', db: 'app' }] });
    const u = await MongoClient.connect(userUri(node.port, 'u', '&directConnection=true'));
    try {
      const c = u.db('app').collection('c');
      const d = u.db('app').collection('d');
      assert.deepEqual(await c.findOne({}), { _id: 1 });
      assert.equal((await refusal(() => d.findOne({}))).code, 13);
      const insert = await refusal(() => c.insertOne({ _id: 2 } as never));
      assert.equal(insert.code, 13);
      assert.match(insert.errmsg, /^not authorized on app to execute command \{ insert: "c", /);

      await root.db('app').command({ grantPrivilegesToRole: 'finder', privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['insert'] }] });
      await c.insertOne({ _id: 2 } as never);
      await root.db('app').command({ revokePrivilegesFromRole: 'finder', privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['insert'] }] });
      assert.equal((await refusal(() => c.insertOne({ _id: 3 } as never))).code, 13);
      assert.deepEqual((await root.db('admin').collection('system.roles').findOne({ _id: 'app.finder' as never }))?.privileges, [{ resource: { db: 'app', collection: 'c' }, actions: ['find', 'collStats'] }]);

      // Roles inherit roles: a role granting insert on every collection of app, then read.
      await root.db('app').command({ createRole: 'inserter', privileges: [{ resource: { db: 'app', collection: '' }, actions: ['insert'] }], roles: [] });
      await root.db('app').command({ grantRolesToRole: 'finder', roles: ['inserter'] });
      await d.insertOne({ _id: 2 } as never);
      const status = await u.db('admin').command({ connectionStatus: 1, showPrivileges: true });
      assert.deepEqual(status.authInfo.authenticatedUserRoles, [{ role: 'finder', db: 'app' }, { role: 'inserter', db: 'app' }]);
      assert.ok(status.authInfo.authenticatedUserPrivileges.some((p: { resource: { collection?: string }; actions: string[] }) => p.resource.collection === '' && p.actions.includes('insert')));
      await root.db('app').command({ revokeRolesFromRole: 'finder', roles: ['inserter'] });
      assert.equal((await refusal(() => d.insertOne({ _id: 3 } as never))).code, 13);

      const self = await refusal(() => root.db('app').command({ grantRolesToRole: 'finder', roles: ['finder'] }));
      assert.equal(self.code, 49);
      assert.equal(self.errmsg, 'Cannot grant role finder@app to itself.');
      await root.db('app').command({ grantRolesToRole: 'inserter', roles: ['finder'] });
      const cycle = await refusal(() => root.db('app').command({ grantRolesToRole: 'finder', roles: ['inserter'] }));
      assert.equal(cycle.code, 49);
      assert.equal(cycle.errmsg, 'Granting roles to finder@app would introduce a cycle in the role graph');

      // updateRole replaces: no privileges of its own, the built-in read of app instead.
      await root.db('app').command({ updateRole: 'finder', privileges: [], roles: ['read'] });
      assert.deepEqual(await d.findOne({ _id: 1 } as never), { _id: 1 });
      assert.equal((await refusal(() => d.insertOne({ _id: 4 } as never))).code, 13);

      // Dropped: taken from the user and from the role that inherited it.
      await root.db('app').command({ dropRole: 'finder' });
      assert.equal((await refusal(() => c.findOne({}))).code, 13);
      assert.deepEqual((await root.db('admin').command({ usersInfo: 'u' })).users[0].roles, []);
      assert.deepEqual((await root.db('app').command({ rolesInfo: 'inserter' })).roles[0].roles, []);
    } finally {
      await u.close();
    }
  });

  it('rolesInfo answers inherited roles, and with showPrivileges the privileges, of user-defined and built-in roles', async () => {
    const app = root.db('app');
    await app.command({ createRole: 'base', privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['find'] }], roles: ['read'] });
    await app.command({ createRole: 'top', privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['update'] }], roles: ['base'] });
    const plain = (await app.command({ rolesInfo: 'top' })).roles;
    assert.deepEqual(plain, [{
      _id: 'app.top', role: 'top', db: 'app', roles: [{ role: 'base', db: 'app' }], isBuiltin: false,
      inheritedRoles: [{ role: 'base', db: 'app' }, { role: 'read', db: 'app' }],
    }]);
    const [top] = (await app.command({ rolesInfo: { role: 'top', db: 'app' }, showPrivileges: true })).roles;
    assert.deepEqual(top.privileges, [{ resource: { db: 'app', collection: 'c' }, actions: ['update'] }]);
    const onC = top.inheritedPrivileges.find((p: { resource: { collection: string } }) => p.resource.collection === 'c');
    assert.deepEqual(onC, { resource: { db: 'app', collection: 'c' }, actions: ['update', 'find'] });
    const onApp = top.inheritedPrivileges.find((p: { resource: { db: string; collection: string } }) => p.resource.db === 'app' && p.resource.collection === '');
    assert.ok(onApp.actions.includes('find') && onApp.actions.includes('listCollections') && !onApp.actions.includes('insert'), JSON.stringify(onApp));

    const [read] = (await app.command({ rolesInfo: 'read', showPrivileges: true })).roles;
    assert.equal(read.isBuiltin, true);
    assert.deepEqual(read.inheritedRoles, []);
    assert.deepEqual(read.privileges, read.inheritedPrivileges);
    assert.deepEqual(read.privileges[0].resource, { db: 'app', collection: '' });
    assert.ok(read.privileges[0].actions.includes('find'));
    const [monitor] = (await root.db('admin').command({ rolesInfo: 'clusterMonitor', showPrivileges: true })).roles;
    assert.ok(monitor.privileges.some((p: { resource: { cluster?: boolean }; actions: string[] }) => p.resource.cluster === true && p.actions.includes('serverStatus')));

    const all = (await app.command({ rolesInfo: 1 })).roles.map((r: { role: string }) => r.role);
    assert.deepEqual(all, ['base', 'inserter', 'top']);
    const withBuiltin = (await app.command({ rolesInfo: 1, showBuiltinRoles: true })).roles.map((r: { role: string }) => r.role);
    assert.deepEqual(withBuiltin, ['base', 'inserter', 'top', 'dbAdmin', 'dbOwner', 'enableSharding', 'read', 'readWrite', 'userAdmin']);

    const [user] = (await root.db('admin').command({ createUser: 'v', pwd: 'pw', roles: [{ role: 'top', db: 'app' }] }).then(() => root.db('admin').command({ usersInfo: 'v', showPrivileges: true }))).users;
    assert.deepEqual(user.inheritedRoles, [{ role: 'top', db: 'app' }, { role: 'base', db: 'app' }, { role: 'read', db: 'app' }]);
    assert.ok(user.inheritedPrivileges.length >= 2);
    assert.equal(user.credentials, undefined);
  });

  it('dropAllRolesFromDatabase drops the database\'s roles and answers how many; only userAdmin-like users manage roles', async () => {
    await root.db('admin').command({ createUser: 'reader', pwd: 'pw', roles: [{ role: 'read', db: 'app' }] });
    await as(userUri(node.port, 'reader', '&directConnection=true'), async (reader) => {
      const err = await refusal(() => reader.db('app').command({ createRole: 'mine', privileges: [], roles: [] }));
      assert.equal(err.code, 13);
    });
    await root.db('admin').command({ createUser: 'admin', pwd: 'pw', roles: [{ role: 'userAdmin', db: 'app' }] });
    await as(userUri(node.port, 'admin', '&directConnection=true'), async (admin) => {
      assert.equal((await admin.db('app').command({ createRole: 'mine', privileges: [], roles: ['read'] })).ok, 1);
      // Granting a privilege on another database needs grantRole there.
      const elsewhere = await refusal(() => admin.db('app').command({ grantPrivilegesToRole: 'mine', privileges: [{ resource: { cluster: true }, actions: ['serverStatus'] }] }));
      assert.equal(elsewhere.code, 13);
      // Nor hand a user a role of another database: grantRole there is asked, as MongoDB asks it.
      const escalation = await refusal(() => admin.db('app').command({ createUser: 'boss', pwd: 'pw', roles: [{ role: 'root', db: 'admin' }] }));
      assert.equal(escalation.code, 13);
      assert.equal((await admin.db('app').command({ createUser: 'helper', pwd: 'pw', roles: ['mine'] })).ok, 1);
      // A user sees itself, and the roles it holds, without viewUser or viewRole.
      assert.equal((await admin.db('admin').command({ usersInfo: 'admin' })).users.length, 1);
      assert.equal((await refusal(() => admin.db('admin').command({ usersInfo: 'root' }))).code, 13);
    });
    const dropped = await root.db('app').command({ dropAllRolesFromDatabase: 1 });
    assert.deepEqual([dropped.n, dropped.ok], [4, 1]);
    assert.deepEqual((await root.db('app').command({ rolesInfo: 1 })).roles, []);
  });
});

describe('user-defined roles through routers: kept on the config server, honoured by every router', () => {
  let config: SpawnedNode;
  let shard: SpawnedNode;
  let routers: SpawnedRouter[];
  withProcesses(async (p) => {
    config = await p.node({ role: 'config' });
    shard = await p.node({ role: 'shard' });
    const args = ['--auth', '--setParameter', 'userCacheInvalidationIntervalSecs=1'];
    routers = [await p.router(config.port, args), await p.router(config.port, args)];
    await as(routers[0]!.uri, (c) => c.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] }));
    await as(userUri(routers[0]!.port, 'root'), async (root) => {
      await root.db('admin').command({ addShard: `127.0.0.1:${shard.port}`, name: 'shard0' });
      await root.db('app').collection('c').insertOne({ _id: 1 } as never);
    });
  });

  it('a role made through one router is the config server\'s, and a grant through it reaches a connection on the other router', async () => {
    await as(userUri(routers[0]!.port, 'root'), async (root) => {
      await root.db('app').command({ createRole: 'finder', privileges: finderPrivileges, roles: [] });
      await root.db('admin').command({ createUser: 'u', pwd: 'pw', roles: [{ role: 'finder', db: 'app' }] });
      const info = await root.db('app').command({ rolesInfo: 'finder', showPrivileges: true });
      assert.deepEqual(info.roles[0].privileges, finderPrivileges);
    });
    await as(config.uri, async (client) => {
      assert.deepEqual(await client.db('admin').collection('system.roles').findOne({ _id: 'app.finder' as never }), { _id: 'app.finder', role: 'finder', db: 'app', privileges: finderPrivileges, roles: [] });
    });
    const clients = await Promise.all(routers.map((r) => MongoClient.connect(userUri(r.port, 'u'))));
    try {
      for (const u of clients) {
        assert.deepEqual(await u.db('app').collection('c').findOne({}), { _id: 1 });
        assert.equal((await refusal(() => u.db('app').collection('c').insertOne({ _id: 9 } as never))).code, 13);
      }
      await as(userUri(routers[0]!.port, 'root'), (root) => root.db('app').command({ grantPrivilegesToRole: 'finder', privileges: [{ resource: { db: 'app', collection: 'c' }, actions: ['insert'] }] }));
      // The router the grant went through applies it at once; the other at its next poll of the
      // config server's user cache generation.
      await clients[0]!.db('app').collection('c').insertOne({ _id: 2 } as never);
      for (let id = 3; ; id++) {
        const inserted = await clients[1]!.db('app').collection('c').insertOne({ _id: id } as never).then(() => true, () => false);
        if (inserted) break;
        await sleep(200);
      }
      await as(userUri(routers[1]!.port, 'root'), (root) => root.db('app').command({ dropRole: 'finder' }));
      assert.equal((await refusal(() => clients[1]!.db('app').collection('c').findOne({}))).code, 13);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});
