import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import { withNode } from '../helpers/fixtures.js';

// Built-in roles checked on a node started with --auth, through the official driver: each user
// runs what its roles grant and is refused the rest with Unauthorized and MongoDB's message.

function userUri(node: { port: number }, user: string, pwd: string, authSource: string): string {
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@127.0.0.1:${node.port}/?authSource=${authSource}&directConnection=true`;
}

async function refusal(run: () => Promise<unknown>): Promise<MongoServerError> {
  const err = await run().then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
  return err;
}

async function asUser<T>(node: SpawnedNode, user: string, run: (client: MongoClient) => Promise<T>, authSource = 'admin'): Promise<T> {
  const client = await MongoClient.connect(userUri(node, user, 'pw', authSource));
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

describe('roles on a node started with --auth', () => {
  let node: SpawnedNode;
  withNode({ extraArgs: ['--auth'] }, async (f) => {
    node = f.node;
    const local = await MongoClient.connect(node.uri);
    try {
      await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    } finally {
      await local.close();
    }
    await asUser(node, 'root', async (root) => {
      const admin = root.db('admin');
      await admin.command({ createUser: 'reader', pwd: 'pw', roles: [{ role: 'read', db: 'a' }] });
      await admin.command({ createUser: 'writer', pwd: 'pw', roles: [{ role: 'readWrite', db: 'a' }] });
      await admin.command({ createUser: 'users', pwd: 'pw', roles: [{ role: 'userAdmin', db: 'a' }] });
      await root.db('a').collection<{ _id: number }>('c').insertOne({ _id: 1 });
      await root.db('b').collection<{ _id: number }>('c').insertOne({ _id: 1 });
    });
  });

  it('a read user finds but cannot insert: 13 with the database and the command', async () => {
    await asUser(node, 'reader', async (client) => {
      assert.deepEqual(await client.db('a').collection<{ _id: number }>('c').findOne({}), { _id: 1 });
      const err = await refusal(() => client.db('a').collection<{ _id: number }>('c').insertOne({ _id: 2 }));
      assert.equal(err.code, 13);
      assert.equal(err.codeName, 'Unauthorized');
      assert.match(err.errmsg, /^not authorized on a to execute command \{ insert: "c", /);
      assert.ok(err.errmsg.includes('$db: "a"') && err.errmsg.includes('documents: [ { _id: 2 } ]'), err.errmsg);
    });
  });

  it('a readWrite user on a writes there and cannot read b', async () => {
    await asUser(node, 'writer', async (client) => {
      await client.db('a').collection<{ _id: number }>('c').insertOne({ _id: 3 });
      assert.equal(await client.db('a').collection<{ _id: number }>('c').countDocuments({}), 2);
      const err = await refusal(() => client.db('b').collection<{ _id: number }>('c').findOne({}));
      assert.equal(err.code, 13);
      assert.match(err.errmsg, /^not authorized on b to execute command \{ find: "c", /);
    });
  });

  it('a userAdmin creates users in its database but reads nothing', async () => {
    await asUser(node, 'users', async (client) => {
      assert.equal((await client.db('a').command({ createUser: 'made', pwd: 'pw', roles: ['read'] })).ok, 1);
      const err = await refusal(() => client.db('a').collection<{ _id: number }>('c').findOne({}));
      assert.equal(err.code, 13);
    });
    await asUser(node, 'made', async (client) => {
      assert.ok(await client.db('a').collection<{ _id: number }>('c').findOne({}));
    }, 'a');
  });

  it('root runs everything: data in any database, users, statistics, server status', async () => {
    await asUser(node, 'root', async (client) => {
      await client.db('b').collection<{ _id: number }>('c').insertOne({ _id: 2 });
      assert.equal(await client.db('b').collection<{ _id: number }>('c').countDocuments({}), 2);
      await client.db('b').collection<{ _id: number }>('c').createIndex({ x: 1 });
      assert.equal((await client.db('admin').command({ serverStatus: 1 })).ok, 1);
      assert.equal((await client.db('b').command({ createUser: 'another', pwd: 'pw', roles: [] })).ok, 1);
      assert.ok((await client.db('admin').admin().listDatabases()).databases.length >= 2);
    });
  });

  it('every user keeps the handshake commands and its own cursors', async () => {
    await asUser(node, 'reader', async (client) => {
      assert.equal((await client.db('a').command({ ping: 1 })).ok, 1);
      assert.equal((await client.db('admin').command({ connectionStatus: 1 })).authInfo.authenticatedUsers[0].user, 'reader');
      assert.equal((await client.db('a').collection<{ _id: number }>('c').find({}, { batchSize: 1 }).toArray()).length, 2);
    });
  });
});

describe('a node without --auth checks no roles', () => {
  let node: SpawnedNode;
  withNode({}, async (f) => {
    node = f.node;
  });

  it('runs every command for a client that never logged in', async () => {
    const client = await MongoClient.connect(node.uri);
    try {
      await client.db('a').collection<{ _id: number }>('c').insertOne({ _id: 1 });
      assert.equal(await client.db('a').collection<{ _id: number }>('c').countDocuments({}), 1);
      assert.equal((await client.db('admin').command({ serverStatus: 1 })).ok, 1);
    } finally {
      await client.close();
    }
  });
});
