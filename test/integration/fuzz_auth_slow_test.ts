import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Binary, BSON } from 'bson';
import { MongoClient } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { frame, mutate, opMsgPayload, Prober, rng } from '../helpers/wire_fuzz.js';
import { withProcesses } from '../helpers/fixtures.js';

// Bad input before authentication, against a node and a router of a cluster with a key file (so
// with authentication on): mangled SASL conversations (saslStart, saslContinue, hello's
// speculativeAuthenticate and saslSupportedMechs), commands that need a login (among them a user,
// a role and a grant to make), messages over the 16 KiB allowed before one and compressed ones.
// Neither process crashes, every reply is one whole BSON document, a client that logged in before
// keeps being served, the failed logins are counted and braked, and no user or role was made.

// DOCSHARD_FUZZ_AUTH_MESSAGES runs more (the million, by hand); each message is made when
// it is sent, so a million take no more memory than a thousand, and the time allowed grows with
// the count (a generous 20 ms a message: the machine may be shared).
const MESSAGES = Number(process.env.DOCSHARD_FUZZ_AUTH_MESSAGES ?? 3_000);
const TIMEOUT_MS = Math.max(600_000, MESSAGES * 20);

const HELLO = frame(2013, 1, opMsgPayload(Buffer.from(BSON.serialize({ hello: 1, compression: ['zlib'], $db: 'admin' }))));

function body(doc: object): Buffer {
  return Buffer.from(BSON.serialize(doc));
}

// A SASL message the driver could have sent, before it is mangled.
function saslBodies(next: () => number): Buffer[] {
  const nonce = randomBytes(18).toString('base64');
  const user = ['root', '__system', 'nobody', 'a=2Cb', 'x'.repeat(Math.floor(next() * 9000))][Math.floor(next() * 5)]!;
  const first = Buffer.from(`n,,n=${user},r=${nonce}`);
  const final = Buffer.from(`c=biws,r=${nonce}${randomBytes(12).toString('base64')},p=${randomBytes(32).toString('base64')}`);
  const mechanism = ['SCRAM-SHA-256', 'SCRAM-SHA-1', 'PLAIN', 'MONGODB-X509', ''][Math.floor(next() * 5)];
  return [
    body({ saslStart: 1, mechanism, payload: new Binary(first), options: { skipEmptyExchange: true }, $db: next() < 0.5 ? 'admin' : 'local' }),
    body({ saslContinue: 1, conversationId: Math.floor(next() * 3), payload: new Binary(final), $db: 'admin' }),
    body({ hello: 1, speculativeAuthenticate: { saslStart: 1, mechanism, payload: new Binary(first), db: 'admin' }, saslSupportedMechs: `admin.${user}`, $db: 'admin' }),
    body({ saslStart: 1, mechanism, payload: first.toString('base64'), $db: 'admin' }),
    body({ saslStart: 1, mechanism, payload: 42, $db: 'admin' }),
    body({ find: 'c', filter: {}, $db: 'app' }),
    body({ insert: 'c', documents: [{ a: 1 }], $db: 'app' }),
    body({ createUser: 'intruder', pwd: 'x', roles: ['root'], $db: 'admin' }),
    body({ createRole: 'intruder', privileges: [{ resource: { anyResource: true }, actions: ['anyAction'] }], roles: [], $db: 'admin' }),
    body({ grantRolesToUser: 'root', roles: ['intruder'], $db: 'admin' }),
  ];
}

function* messages(next: () => number, total: number): Generator<Buffer> {
  for (let made = 0; made < total; made++) {
    const bodies = saslBodies(next);
    const chosen = bodies[Math.floor(next() * bodies.length)]!;
    const kind = Math.floor(next() * 5);
    if (kind === 0) yield frame(2013, 1, opMsgPayload(chosen));
    else if (kind === 1) yield frame(2013, 1, opMsgPayload(mutate(chosen, next)));
    else if (kind === 2) yield mutate(frame(2013, 1, opMsgPayload(chosen)), next, 4);
    else if (kind === 3) {
      // Compressed before a login: the connection is closed, nothing inflated.
      const inner = opMsgPayload(chosen);
      const payload = Buffer.alloc(9);
      payload.writeInt32LE(2013, 0);
      payload.writeInt32LE(inner.length, 4);
      payload.writeUInt8(2, 8);
      yield frame(2012, 1, Buffer.concat([payload, zlib.deflateSync(inner)]));
    } else {
      // Over the 16 KiB a connection may send before it logs in.
      yield frame(2013, 1, opMsgPayload(body({ saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(randomBytes(16_400 + Math.floor(next() * 4000))), $db: 'admin' })));
    }
  }
}

async function survives(port: number, loggedIn: MongoClient, seed: number, db: string): Promise<void> {
  const prober = new Prober(port, HELLO);
  let pingId = 1_000_000;
  for (const m of messages(rng(seed), MESSAGES)) await prober.probe(m, pingId++);
  prober.close();
  assert.ok(prober.replies > MESSAGES / 2, `replies: ${prober.replies}`);
  assert.ok(prober.closes > 0, 'oversized and compressed messages closed connections');
  assert.equal(prober.malformedReplies, 0, 'every reply is one whole BSON document');
  // Logged in before, and still served; the failures were counted and 127.0.0.1 is braked.
  assert.deepEqual(await loggedIn.db(db).collection('c').findOne({ _id: 1 } as never), { _id: 1 });
  const status = (await loggedIn.db('admin').command({ serverStatus: 1 })).security.authentication;
  assert.ok(status.mechanisms['SCRAM-SHA-256'].authenticate.failed > 0, JSON.stringify(status));
  assert.ok(status.throttled.addressLockouts >= 1, JSON.stringify(status));
  assert.equal((await loggedIn.db('admin').command({ usersInfo: 'intruder' })).users.length, 0);
  assert.equal((await loggedIn.db('admin').command({ rolesInfo: 'intruder' })).roles.length, 0);
}

describe('bad input before authentication never crashes a node or a router', () => {
  let dir: string;
  let key: string;
  let config: SpawnedNode;
  let shard: SpawnedNode;
  let router: SpawnedRouter;
  withProcesses(async (p) => {
    dir = p.dir('docshard-fuzz-auth-');
    key = path.join(dir, 'key');
    writeFileSync(key, randomBytes(48).toString('base64'), { mode: 0o600 });
    config = await p.node({ role: 'config', extraArgs: ['--keyFile', key] });
    shard = await p.node({ role: 'shard', extraArgs: ['--keyFile', key] });
    router = await p.router(config.port, ['--keyFile', key]);
  });

  it(`a node with a key file survives ${MESSAGES} mangled logins and pre-login messages`, { timeout: TIMEOUT_MS }, async () => {
    const local = await MongoClient.connect(`mongodb://127.0.0.1:${shard.port}/?directConnection=true`);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    const root = await MongoClient.connect(`mongodb://root:pw@127.0.0.1:${shard.port}/?authSource=admin&directConnection=true&maxPoolSize=1`);
    try {
      await root.db('app').collection('c').insertOne({ _id: 1 } as never);
      await survives(shard.port, root, 20261126, 'app');
    } finally {
      await root.close();
    }
  });

  it(`a router with a key file survives ${MESSAGES} mangled logins and pre-login messages`, { timeout: TIMEOUT_MS }, async () => {
    const local = await MongoClient.connect(router.uri);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    const root = await MongoClient.connect(`mongodb://root:pw@127.0.0.1:${router.port}/?authSource=admin&maxPoolSize=1`);
    try {
      // The node's fuzzing has locked 127.0.0.1 out of its logins; the cluster's own, as __system,
      // are never braked, so the config server still reaches the shard.
      await root.db('admin').command({ addShard: `127.0.0.1:${shard.port}`, name: 'shard0' });
      await root.db('routed').collection('c').insertOne({ _id: 1 } as never);
      await survives(router.port, root, 20261127, 'routed');
    } finally {
      await root.close();
    }
  });
});
