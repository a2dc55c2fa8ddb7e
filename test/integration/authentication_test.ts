import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { Binary, MongoClient, MongoServerError, type Db } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import { startRecordingProxy } from '../helpers/recording_proxy.js';
import { withNode } from '../helpers/fixtures.js';

// SCRAM-SHA-256 and SCRAM-SHA-1 on a node started with --auth, through the official driver: the
// localhost exception creates the first user, the driver logs in with a URI user and password,
// and everything before that is refused with MongoDB's codes and messages.

function userUri(node: { port: number }, user: string, pwd: string, extra = ''): string {
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@127.0.0.1:${node.port}/?authSource=admin&directConnection=true${extra}`;
}

async function refusal(run: () => Promise<unknown>): Promise<MongoServerError> {
  const err = await run().then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
  return err;
}

// The client's side of SCRAM-SHA-256 by hand, on one connection (maxPoolSize 1), for what the
// driver never sends: the empty final exchange and a wrong conversationId.
async function scramBySaslCommands(admin: Db, user: string, pwd: string, options: { skipEmptyExchange: boolean }): Promise<boolean[]> {
  const bare = `n=${user},r=${'c'.repeat(32)}`;
  const start = await admin.command({ saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(Buffer.from(`n,,${bare}`)), options });
  const serverFirst = Buffer.from(start.payload.buffer).toString();
  const fields = Object.fromEntries(serverFirst.split(',').map((f) => [f[0], f.slice(2)])) as Record<string, string>;
  const salted = pbkdf2Sync(pwd, Buffer.from(fields.s!, 'base64'), Number(fields.i), 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const withoutProof = `c=biws,r=${fields.r}`;
  const signature = createHmac('sha256', createHash('sha256').update(clientKey).digest()).update(`${bare},${serverFirst},${withoutProof}`).digest();
  const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!)).toString('base64');
  const dones = [start.done as boolean];
  const final = await admin.command({ saslContinue: 1, conversationId: start.conversationId, payload: new Binary(Buffer.from(`${withoutProof},p=${proof}`)) });
  assert.match(Buffer.from(final.payload.buffer).toString(), /^v=/);
  dones.push(final.done as boolean);
  if (final.done === false) {
    const empty = await admin.command({ saslContinue: 1, conversationId: 1, payload: new Binary(Buffer.alloc(0)) });
    assert.equal(Buffer.from(empty.payload.buffer).length, 0);
    dones.push(empty.done as boolean);
  }
  return dones;
}

describe('authentication on a node started with --auth', () => {
  let node: SpawnedNode;
  withNode({ extraArgs: ['--auth'] }, async (f) => {
    node = f.node;
  });

  it('refuses an unauthenticated find with 13, and runs the handshake commands', async () => {
    const client = await MongoClient.connect(node.uri);
    try {
      const err = await refusal(() => client.db('app').collection('c').findOne({}));
      assert.equal(err.code, 13);
      assert.equal(err.codeName, 'Unauthorized');
      assert.equal(err.errmsg, 'command find requires authentication');
      assert.equal((await client.db('admin').command({ ping: 1 })).ok, 1);
      assert.equal((await client.db('admin').command({ buildInfo: 1 })).ok, 1);
      assert.deepEqual((await client.db('admin').command({ connectionStatus: 1 })).authInfo, { authenticatedUsers: [], authenticatedUserRoles: [] });
    } finally {
      await client.close();
    }
  });

  it('creates the first user through the localhost exception, and no second one', async () => {
    const client = await MongoClient.connect(node.uri);
    try {
      assert.equal((await client.db('admin').command({ createUser: 'admin', pwd: 'pencil', roles: ['root'] })).ok, 1);
      const err = await refusal(() => client.db('admin').command({ createUser: 'other', pwd: 'x', roles: [] }));
      assert.equal(err.code, 13);
      assert.equal(err.errmsg, 'command createUser requires authentication');
    } finally {
      await client.close();
    }
  });

  it('logs in with SCRAM-SHA-256 by default, in the handshake, and reads and writes', async () => {
    // The driver does not report its authentication commands to command monitoring: a proxy sees them.
    const proxy = await startRecordingProxy(node.port);
    const client = new MongoClient(userUri(proxy, 'admin', 'pencil'));
    try {
      await client.connect();
      const coll = client.db('app').collection('c');
      await coll.insertOne({ _id: 1, v: 'sha256' } as never);
      assert.deepEqual(await coll.findOne({ _id: 1 } as never), { _id: 1, v: 'sha256' });
      const status = await client.db('admin').command({ connectionStatus: 1 });
      assert.deepEqual(status.authInfo, { authenticatedUsers: [{ user: 'admin', db: 'admin' }], authenticatedUserRoles: [{ role: 'root', db: 'admin' }] });
      assert.deepEqual((await client.db('admin').command({ getCmdLineOpts: 1 })).parsed.security, { authorization: 'enabled' });
      // speculativeAuthenticate answered in the hello: the driver goes on with saslContinue and
      // never sends saslStart.
      const sasl = proxy.commands.filter((c) => c.saslStart !== undefined || c.saslContinue !== undefined);
      assert.deepEqual(sasl.map((c) => Object.keys(c)[0]), ['saslContinue']);
    } finally {
      await client.close();
      await proxy.stop();
    }
    assert.ok(node.logs.some((l) => l.includes('"mechanism":"SCRAM-SHA-256"') && l.includes('Authentication succeeded')));
  });

  it('logs in with authMechanism=SCRAM-SHA-1, and reads and writes', async () => {
    const client = new MongoClient(userUri(node, 'admin', 'pencil', '&authMechanism=SCRAM-SHA-1'));
    try {
      await client.connect();
      const coll = client.db('app').collection('c');
      await coll.insertOne({ _id: 2, v: 'sha1' } as never);
      assert.equal(await coll.countDocuments(), 2);
    } finally {
      await client.close();
    }
    assert.ok(node.logs.some((l) => l.includes('"mechanism":"SCRAM-SHA-1"') && l.includes('Authentication succeeded')));
  });

  it('answers a wrong password, an unknown user and a mechanism the user lacks alike: 18, Authentication failed.', async () => {
    const admin = await MongoClient.connect(userUri(node, 'admin', 'pencil'));
    try {
      await admin.db('admin').command({ createUser: 'old', pwd: 'sha1only', roles: [{ role: 'read', db: 'app' }], mechanisms: ['SCRAM-SHA-1'] });
    } finally {
      await admin.close();
    }
    for (const uri of [userUri(node, 'admin', 'wrong'), userUri(node, 'nobody', 'pencil'), userUri(node, 'old', 'sha1only', '&authMechanism=SCRAM-SHA-256')]) {
      const err = await refusal(() => MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 }));
      assert.equal(err.code, 18, uri);
      assert.equal(err.codeName, 'AuthenticationFailed');
      assert.equal(err.errmsg, 'Authentication failed.');
    }
    // Without a mechanism, the driver asks the user's (saslSupportedMechs) and picks SCRAM-SHA-1.
    const old = await MongoClient.connect(userUri(node, 'old', 'sha1only'));
    try {
      assert.equal(await old.db('app').collection('c').countDocuments(), 2);
    } finally {
      await old.close();
    }
  });

  it('answers saslStart and saslContinue with conversationId 1, the empty final exchange unless skipEmptyExchange', async () => {
    for (const skipEmptyExchange of [false, true]) {
      const client = await MongoClient.connect(node.uri, { maxPoolSize: 1 });
      try {
        const admin = client.db('admin');
        assert.deepEqual(await scramBySaslCommands(admin, 'admin', 'pencil', { skipEmptyExchange }), skipEmptyExchange ? [false, true] : [false, false, true]);
        assert.deepEqual((await admin.command({ connectionStatus: 1 })).authInfo.authenticatedUsers, [{ user: 'admin', db: 'admin' }]);
        assert.equal(await client.db('app').collection('c').countDocuments(), 2);
      } finally {
        await client.close();
      }
    }
    const client = await MongoClient.connect(node.uri, { maxPoolSize: 1 });
    try {
      const admin = client.db('admin');
      await admin.command({ saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(Buffer.from('n,,n=admin,r=abc')) });
      const wrongId = await refusal(() => admin.command({ saslContinue: 1, conversationId: 2, payload: new Binary(Buffer.from('c=biws')) }));
      assert.deepEqual([wrongId.code, wrongId.errmsg], [18, 'Authentication failed.']);
      const plain = await refusal(() => admin.command({ saslStart: 1, mechanism: 'PLAIN', payload: new Binary(Buffer.from('\0admin\0pencil')) }));
      assert.deepEqual([plain.code, plain.errmsg], [18, 'Authentication failed.']);
      assert.equal((await refusal(() => client.db('app').collection('c').countDocuments())).code, 13);
    } finally {
      await client.close();
    }
  });

  it('SASLpreps SCRAM-SHA-256 passwords: the drivers specification\'s IX and \u2168 users log in', async () => {
    const admin = await MongoClient.connect(userUri(node, 'admin', 'pencil'));
    try {
      await admin.db('admin').command({ createUser: 'IX', pwd: 'IX', roles: ['root'], mechanisms: ['SCRAM-SHA-256'] });
      await admin.db('admin').command({ createUser: '\u2168', pwd: '\u2163', roles: ['root'], mechanisms: ['SCRAM-SHA-256'] });
    } finally {
      await admin.close();
    }
    for (const [user, pwd] of [['IX', 'IX'], ['IX', 'I\u00ADX'], ['\u2168', 'IV'], ['\u2168', 'I\u00ADV']] as const) {
      const client = await MongoClient.connect(userUri(node, user, pwd));
      try {
        assert.deepEqual((await client.db('admin').command({ connectionStatus: 1 })).authInfo.authenticatedUsers, [{ user, db: 'admin' }]);
      } finally {
        await client.close();
      }
    }
  });

  it("keeps users in admin.system.users in MongoDB's shape; usersInfo and dropUser", async () => {
    const client = await MongoClient.connect(userUri(node, 'admin', 'pencil'));
    try {
      await client.db('app').command({ createUser: 'a,b=c', pwd: 'p', roles: ['readWrite'] });
      const { users } = await client.db('app').command({ usersInfo: 'a,b=c', showCredentials: true });
      assert.equal(users.length, 1);
      const u = users[0];
      assert.equal(u._id, 'app.a,b=c');
      assert.equal(u.userId.sub_type, 4);
      assert.deepEqual([u.user, u.db, u.roles, u.mechanisms], ['a,b=c', 'app', [{ role: 'readWrite', db: 'app' }], ['SCRAM-SHA-1', 'SCRAM-SHA-256']]);
      const sha1 = u.credentials['SCRAM-SHA-1'];
      const sha256 = u.credentials['SCRAM-SHA-256'];
      assert.deepEqual([sha1.iterationCount, Buffer.from(sha1.salt, 'base64').length, Buffer.from(sha1.storedKey, 'base64').length], [10000, 16, 20]);
      assert.deepEqual([sha256.iterationCount, Buffer.from(sha256.salt, 'base64').length, Buffer.from(sha256.serverKey, 'base64').length], [15000, 28, 32]);
      assert.equal((await client.db('app').command({ usersInfo: 1 })).users[0].credentials, undefined);
      // The user name's "," and "=" travel escaped (=2C, =3D) in SCRAM's messages.
      const escaped = new MongoClient(`mongodb://${encodeURIComponent('a,b=c')}:p@127.0.0.1:${node.port}/?authSource=app&directConnection=true`);
      await escaped.connect();
      await escaped.close();
      const dup = await refusal(() => client.db('app').command({ createUser: 'a,b=c', pwd: 'p', roles: [] }));
      assert.deepEqual([dup.code, dup.errmsg], [51003, 'User "a,b=c@app" already exists']);
      assert.equal((await client.db('app').command({ dropUser: 'a,b=c' })).ok, 1);
      const gone = await refusal(() => client.db('app').command({ dropUser: 'a,b=c' }));
      assert.deepEqual([gone.code, gone.codeName, gone.errmsg], [11, 'UserNotFound', "User 'a,b=c@app' not found"]);
      const role = await refusal(() => client.db('app').command({ createUser: 'r', pwd: 'p', roles: ['root'] }));
      assert.deepEqual([role.code, role.errmsg], [31, 'Could not find role: root@app']);
    } finally {
      await client.close();
    }
  });
});

describe('a node started without --auth', () => {
  let node: SpawnedNode;
  withNode({}, async (f) => {
    node = f.node;
  });

  it('serves unauthenticated clients as before, and still authenticates one that logs in', async () => {
    const client = await MongoClient.connect(node.uri);
    try {
      await client.db('app').collection('c').insertOne({ _id: 1 } as never);
      assert.equal(await client.db('app').collection('c').countDocuments(), 1);
      await client.db('admin').command({ createUser: 'u', pwd: 'p', roles: ['root'] });
      await client.db('admin').command({ createUser: 'v', pwd: 'p', roles: ['root'] });
      assert.equal(await client.db('app').collection('c').countDocuments(), 1);
    } finally {
      await client.close();
    }
    const user = await MongoClient.connect(userUri(node, 'u', 'p'));
    try {
      assert.deepEqual((await user.db('admin').command({ connectionStatus: 1 })).authInfo.authenticatedUsers, [{ user: 'u', db: 'admin' }]);
    } finally {
      await user.close();
    }
  });
});
