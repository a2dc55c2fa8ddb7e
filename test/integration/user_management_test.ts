import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { withNode, withProcesses } from '../helpers/fixtures.js';

// updateUser, grantRolesToUser, revokeRolesFromUser and rolesInfo through the official driver, on
// a node with --auth and through routers with --auth: a change of a user's roles or password
// applies to connections already logged in at their next command (at once on the node and on the
// router it went through, within userCacheInvalidationIntervalSecs on another router).

function userUri(port: number, user: string, pwd: string, authSource = 'admin', extra = ''): string {
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@127.0.0.1:${port}/?authSource=${authSource}&maxPoolSize=1${extra}`;
}

async function refusal(run: () => Promise<unknown>): Promise<MongoServerError> {
  const err = await run().then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
  return err;
}

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, 'the condition did not come true in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const succeeds = (run: () => Promise<unknown>): Promise<boolean> => run().then(() => true, () => false);

describe('user management on a node with --auth', () => {
  let node: SpawnedNode;
  let root: MongoClient;
  withNode({ extraArgs: ['--auth'] }, async (f) => {
    node = f.node;
    const local = await MongoClient.connect(`mongodb://127.0.0.1:${node.port}/?directConnection=true`);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    root = await f.connect(userUri(node.port, 'root', 'pw', 'admin', '&directConnection=true')).connect();
    await root.db('a').collection('c').insertOne({ _id: 1 } as never);
  });

  it('grants and revokes roles on a connection already logged in, at its next command', async () => {
    await root.db('a').command({ createUser: 'u', pwd: 'pw', roles: ['read'] });
    const u = await MongoClient.connect(userUri(node.port, 'u', 'pw', 'a', '&directConnection=true'));
    try {
      const c = u.db('a').collection<{ _id: number }>('c');
      assert.equal((await refusal(() => c.insertOne({ _id: 2 }))).code, 13);
      await root.db('a').command({ grantRolesToUser: 'u', roles: ['readWrite'] });
      await c.insertOne({ _id: 2 });
      const info = await root.db('a').command({ usersInfo: 'u' });
      assert.deepEqual(info.users[0].roles, [{ role: 'read', db: 'a' }, { role: 'readWrite', db: 'a' }]);
      await root.db('a').command({ revokeRolesFromUser: 'u', roles: ['readWrite', { role: 'read', db: 'a' }] });
      const err = await refusal(() => c.findOne({}));
      assert.equal(err.code, 13);
      assert.match(err.errmsg, /^not authorized on a to execute command \{ find: "c"/);
      const status = await u.db('a').command({ connectionStatus: 1 });
      assert.deepEqual(status.authInfo.authenticatedUserRoles, []);
      // updateUser's roles replace the user's.
      await root.db('a').command({ updateUser: 'u', roles: [{ role: 'read', db: 'a' }] });
      assert.ok(await c.findOne({ _id: 2 }));
    } finally {
      await u.close();
    }
  });

  it('updateUser changes the password: the old one is refused with 18, the new one logs in', async () => {
    await root.db('a').command({ createUser: 'p', pwd: 'old', roles: ['read'] });
    await root.db('a').command({ updateUser: 'p', pwd: 'new', customData: { team: 'x' } });
    const err = await refusal(() => MongoClient.connect(userUri(node.port, 'p', 'old', 'a', '&directConnection=true')).then((c) => c.close()));
    assert.equal(err.code, 18);
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-1']) {
      const client = await MongoClient.connect(userUri(node.port, 'p', 'new', 'a', `&directConnection=true&authMechanism=${mechanism}`));
      assert.ok(await client.db('a').collection('c').findOne({}));
      await client.close();
    }
    const info = await root.db('a').command({ usersInfo: 'p' });
    assert.deepEqual(info.users[0].customData, { team: 'x' });
    assert.deepEqual(info.users[0].mechanisms, ['SCRAM-SHA-1', 'SCRAM-SHA-256']);
  });

  it('a user dropped while logged in runs nothing more that needs a login', async () => {
    await root.db('a').command({ createUser: 'd', pwd: 'pw', roles: ['read'] });
    const d = await MongoClient.connect(userUri(node.port, 'd', 'pw', 'a', '&directConnection=true'));
    try {
      assert.ok(await d.db('a').collection('c').findOne({}));
      await root.db('a').command({ dropUser: 'd' });
      const err = await refusal(() => d.db('a').collection('c').findOne({}));
      assert.equal(err.code, 13);
      assert.equal(err.errmsg, 'command find requires authentication');
    } finally {
      await d.close();
    }
  });

  it('refuses bad arguments as MongoDB does', async () => {
    const a = root.db('a');
    const cases: [object, number, string | RegExp][] = [
      [{ updateUser: 'u' }, 2, 'Must specify at least one field to update in updateUser'],
      [{ updateUser: 'nobody', pwd: 'x' }, 11, 'User nobody@a not found'],
      [{ updateUser: 'u', roles: ['nosuchrole'] }, 31, 'Could not find role: nosuchrole@a'],
      [{ grantRolesToUser: 'u', roles: [] }, 2, '"grantRolesToUser" command requires a non-empty "roles" array'],
      [{ revokeRolesFromUser: 'u' }, 2, '"revokeRolesFromUser" command requires a non-empty "roles" array'],
      [{ grantRolesToUser: 'nobody', roles: ['read'] }, 11, 'Could not find user "nobody" for db "a"'],
      [{ createUser: 'l', pwd: 'pw', roles: [] }, 2, 'Cannot create users in the local database'],
    ];
    for (const [cmd, code, message] of cases) {
      const db = 'createUser' in cmd ? root.db('local') : a;
      const err = await refusal(() => db.command(cmd));
      assert.equal(err.code, code, JSON.stringify(cmd));
      assert.equal(err.errmsg, message);
    }
  });

  it('rolesInfo describes the built-in roles; a userAdmin grants, a reader may not', async () => {
    const a = root.db('a');
    assert.deepEqual((await a.command({ rolesInfo: 'read' })).roles, [{ role: 'read', db: 'a', isBuiltin: true, roles: [], inheritedRoles: [] }]);
    assert.deepEqual((await a.command({ rolesInfo: [{ role: 'root', db: 'admin' }, { role: 'root', db: 'a' }, 'dbOwner'] })).roles.map((r: { role: string; db: string }) => `${r.role}@${r.db}`), ['root@admin', 'dbOwner@a']);
    assert.deepEqual((await a.command({ rolesInfo: 1 })).roles, []);
    assert.deepEqual((await a.command({ rolesInfo: 1, showBuiltinRoles: true })).roles.map((r: { role: string }) => r.role), ['dbAdmin', 'dbOwner', 'enableSharding', 'read', 'readWrite', 'userAdmin']);
    await a.command({ createUser: 'admin_a', pwd: 'pw', roles: ['userAdmin'] });
    await a.command({ createUser: 'r', pwd: 'pw', roles: ['read'] });
    const userAdmin = await MongoClient.connect(userUri(node.port, 'admin_a', 'pw', 'a', '&directConnection=true'));
    const reader = await MongoClient.connect(userUri(node.port, 'r', 'pw', 'a', '&directConnection=true'));
    try {
      assert.equal((await userAdmin.db('a').command({ grantRolesToUser: 'r', roles: ['readWrite'] })).ok, 1);
      assert.equal((await userAdmin.db('a').command({ rolesInfo: 'read' })).ok, 1);
      const err = await refusal(() => reader.db('a').command({ grantRolesToUser: 'r', roles: ['dbOwner'] }));
      assert.equal(err.code, 13);
    } finally {
      await userAdmin.close();
      await reader.close();
    }
  });
});

describe('user management through routers with --auth', () => {
  let config: SpawnedNode;
  let shard: SpawnedNode;
  let routers: SpawnedRouter[];
  let root: MongoClient;
  withProcesses(async (p) => {
    config = await p.node({ role: 'config' });
    shard = await p.node({ role: 'shard' });
    routers = [
      await p.router(config.port, ['--auth', '--setParameter', 'userCacheInvalidationIntervalSecs=1']),
      await p.router(config.port, ['--auth', '--setParameter', 'userCacheInvalidationIntervalSecs=1']),
    ];
    const local = await MongoClient.connect(routers[0]!.uri);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    root = await p.connect(userUri(routers[0]!.port, 'root', 'pw')).connect();
    await root.db('admin').command({ addShard: `127.0.0.1:${shard.port}`, name: 'shard0' });
    await root.db('admin').command({ createUser: 'u', pwd: 'pw', roles: [{ role: 'read', db: 'a' }] });
  });

  it('a grant through one router applies at once there and within the poll interval on the other; so does a drop', async () => {
    const here = await MongoClient.connect(userUri(routers[0]!.port, 'u', 'pw'));
    const there = await MongoClient.connect(userUri(routers[1]!.port, 'u', 'pw'));
    try {
      for (const client of [here, there]) assert.equal((await refusal(() => client.db('a').collection('c').insertOne({ x: 1 }))).code, 13);
      await root.db('admin').command({ grantRolesToUser: 'u', roles: [{ role: 'readWrite', db: 'a' }] });
      await here.db('a').collection('c').insertOne({ x: 1 });
      await until(() => succeeds(() => there.db('a').collection('c').insertOne({ x: 2 })));
      assert.deepEqual((await root.db('admin').command({ rolesInfo: { role: 'readWrite', db: 'a' } })).roles, [{ role: 'readWrite', db: 'a', isBuiltin: true, roles: [], inheritedRoles: [] }]);
      await root.db('admin').command({ dropUser: 'u' });
      assert.equal((await refusal(() => here.db('a').collection('c').findOne({}))).errmsg, 'command find requires authentication');
      await until(async () => (await there.db('a').collection('c').findOne({}).then(() => 0, (e: MongoServerError) => e.code)) === 13);
    } finally {
      await here.close();
      await there.close();
    }
  });
});
