import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { as, refusal } from '../helpers/server_errors.js';
import { withProcesses } from '../helpers/fixtures.js';

// Authentication and authorization on routers started with --auth, through the official driver:
// the cluster's users live on the config server, any router logs a client in against them, and
// every command, the fast paths' included, is checked against the user's roles.

function userUri(router: { port: number }, user: string, pwd: string, extra = ''): string {
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@127.0.0.1:${router.port}/?authSource=admin${extra}`;
}

interface Doc { _id: number; k: number }

describe('authentication through routers started with --auth', () => {
  let config: SpawnedNode;
  let shards: SpawnedNode[];
  let routers: SpawnedRouter[];
  withProcesses(async (p) => {
    config = await p.node({ role: 'config' });
    shards = await Promise.all([p.node({ role: 'shard' }), p.node({ role: 'shard' })]);
    routers = [await p.router(config.port, ['--auth']), await p.router(config.port, ['--auth'])];
  });

  it('refuses an unauthenticated command with 13, and creates the first user from this host', async () => {
    await as(routers[0]!.uri, async (client) => {
      const err = await refusal(() => client.db('admin').command({ listShards: 1 }));
      assert.equal(err.code, 13);
      assert.equal(err.codeName, 'Unauthorized');
      assert.equal(err.errmsg, 'command listShards requires authentication');
      assert.equal((await client.db('admin').command({ ping: 1 })).ok, 1);
      assert.equal((await client.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] })).ok, 1);
      // The exception ends with the first user.
      const again = await refusal(() => client.db('admin').command({ createUser: 'other', pwd: 'pw', roles: ['root'] }));
      assert.equal(again.code, 13);
      assert.equal(again.errmsg, 'command createUser requires authentication');
    });
    // The user is the config server's, in MongoDB's shape.
    await as(config.uri, async (client) => {
      const doc = await client.db('admin').collection('system.users').findOne({ _id: 'admin.root' as never });
      assert.deepEqual(Object.keys(doc?.credentials ?? {}).sort(), ['SCRAM-SHA-1', 'SCRAM-SHA-256']);
      assert.deepEqual(doc?.roles, [{ role: 'root', db: 'admin' }]);
    });
  });

  it('logs root in on either router with SHA-256 and SHA-1; a wrong password or user answers 18', async () => {
    for (const router of routers) {
      await as(userUri(router, 'root', 'pw'), async (client) => {
        const status = await client.db('admin').command({ connectionStatus: 1 });
        assert.deepEqual(status.authInfo.authenticatedUsers, [{ user: 'root', db: 'admin' }]);
        assert.deepEqual(status.authInfo.authenticatedUserRoles, [{ role: 'root', db: 'admin' }]);
      });
    }
    await as(userUri(routers[1]!, 'root', 'pw', '&authMechanism=SCRAM-SHA-1'), async (client) => {
      assert.equal((await client.db('admin').command({ listShards: 1 })).ok, 1);
    });
    for (const uri of [userUri(routers[0]!, 'root', 'wrong'), userUri(routers[0]!, 'nobody', 'pw')]) {
      const err = await refusal(() => MongoClient.connect(uri).then((c) => c.close()));
      assert.equal(err.code, 18);
      assert.equal(err.codeName, 'AuthenticationFailed');
      assert.equal(err.errmsg, 'Authentication failed.');
    }
  });

  it('root builds the cluster; getCmdLineOpts says authorization is enabled', async () => {
    await as(userUri(routers[0]!, 'root', 'pw'), async (client) => {
      const admin = client.db('admin');
      for (const [i, shard] of shards.entries()) await admin.command({ addShard: `127.0.0.1:${shard.port}`, name: `shard${i}` });
      await admin.command({ enableSharding: 'a' });
      await admin.command({ shardCollection: 'a.c', key: { k: 1 } });
      await admin.command({ split: 'a.c', middle: { k: 0 } });
      await admin.command({ moveChunk: 'a.c', find: { k: 0 }, to: 'shard1' });
      await client.db('a').collection<Doc>('c').insertMany([{ _id: 1, k: -1 }, { _id: 2, k: 1 }]);
      await client.db('b').collection<Doc>('c').insertOne({ _id: 1, k: 1 });
      await admin.command({ createUser: 'reader', pwd: 'pw', roles: [{ role: 'read', db: 'a' }] });
      await admin.command({ createUser: 'writer', pwd: 'pw', roles: [{ role: 'readWrite', db: 'a' }] });
      await admin.command({ createUser: 'sha1', pwd: 'pw', roles: [{ role: 'read', db: 'a' }], mechanisms: ['SCRAM-SHA-1'] });
      const opts = await admin.command({ getCmdLineOpts: 1 });
      assert.deepEqual(opts.parsed.security, { authorization: 'enabled' });
    });
  });

  it('a read user finds on both shards and through the fast path, and cannot insert', async () => {
    const before = await as(userUri(routers[1]!, 'root', 'pw'), (c) => c.db('admin').command({ serverStatus: 1 }));
    await as(userUri(routers[1]!, 'reader', 'pw'), async (client) => {
      const c = client.db('a').collection<Doc>('c');
      assert.deepEqual(await c.find({}).sort({ _id: 1 }).toArray(), [{ _id: 1, k: -1 }, { _id: 2, k: 1 }]);
      assert.deepEqual(await c.findOne({ k: 1 }), { _id: 2, k: 1 });
      const err = await refusal(() => c.insertOne({ _id: 3, k: 5 }));
      assert.equal(err.code, 13);
      assert.match(err.errmsg, /^not authorized on a to execute command \{ insert: "c", /);
      const listed = await refusal(() => client.db('admin').command({ listShards: 1 }));
      assert.equal(listed.code, 13);
    });
    const after = await as(userUri(routers[1]!, 'root', 'pw'), (c) => c.db('admin').command({ serverStatus: 1 }));
    // The findOne by shard key went the fast path; the refused insert did not.
    assert.equal(after.docshard.fastPaths.find - before.docshard.fastPaths.find, 1);
    assert.equal(after.docshard.fastPaths.insert, before.docshard.fastPaths.insert);
  });

  it('a readWrite user on a writes there and cannot read b; a SHA-1-only user logs in by negotiation', async () => {
    await as(userUri(routers[0]!, 'writer', 'pw'), async (client) => {
      await client.db('a').collection<Doc>('c').insertOne({ _id: 3, k: 5 });
      assert.equal(await client.db('a').collection<Doc>('c').countDocuments({}), 3);
      const err = await refusal(() => client.db('b').collection<Doc>('c').findOne({}));
      assert.equal(err.code, 13);
      assert.match(err.errmsg, /^not authorized on b to execute command \{ find: "c", /);
      const shard = await refusal(() => client.db('admin').command({ shardCollection: 'a.d', key: { k: 1 } }));
      assert.equal(shard.code, 13);
    });
    await as(userUri(routers[1]!, 'sha1', 'pw'), async (client) => {
      assert.equal(await client.db('a').collection<Doc>('c').countDocuments({}), 3);
    });
  });

  it('usersInfo and dropUser act on the config server: a dropped user cannot log in on any router', async () => {
    await as(userUri(routers[0]!, 'root', 'pw'), async (client) => {
      const info = await client.db('admin').command({ usersInfo: 'writer' });
      assert.deepEqual(info.users.map((u: { _id: string; mechanisms: string[] }) => [u._id, u.mechanisms]), [['admin.writer', ['SCRAM-SHA-1', 'SCRAM-SHA-256']]]);
      assert.equal(info.users[0].credentials, undefined);
      await client.db('admin').command({ dropUser: 'writer' });
      const gone = await refusal(() => client.db('admin').command({ dropUser: 'writer' }));
      assert.equal(gone.codeName, 'UserNotFound');
    });
    for (const router of routers) {
      const err = await refusal(() => MongoClient.connect(userUri(router, 'writer', 'pw')).then((c) => c.close()));
      assert.equal(err.code, 18);
    }
  });
});
