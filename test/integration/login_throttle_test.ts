import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { withNode, withProcesses } from '../helpers/fixtures.js';

// Failed logins are braked per user (10 a minute) and per client address (20 a minute), beyond
// MongoDB, and counted in serverStatus's security.authentication: a locked user or address is
// answered the same AuthenticationFailed, even with the right password, while others log in.

function userUri(port: number, user: string, pwd: string, extra = ''): string {
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@127.0.0.1:${port}/?authSource=admin&maxPoolSize=1${extra}`;
}

async function login(port: number, user: string, pwd: string, extra = ''): Promise<number | undefined> {
  return MongoClient.connect(userUri(port, user, pwd, extra)).then(async (c) => { await c.close(); return undefined; }, (e: unknown) => {
    assert.ok(e instanceof MongoServerError, String(e));
    assert.equal(e.errmsg, 'Authentication failed.');
    return Number(e.code);
  });
}

interface Throttled { attempts: number; addressLockouts: number; userLockouts: number; addressesLocked: number; usersLocked: number }

async function authentication(root: MongoClient): Promise<{ mechanisms: Record<string, { authenticate: Record<string, number>; speculativeAuthenticate: Record<string, number> }>; throttled: Throttled }> {
  return (await root.db('admin').command({ serverStatus: 1 })).security.authentication;
}

describe('failed logins on a node with --auth', () => {
  let node: SpawnedNode;
  let root: MongoClient;
  withNode({ extraArgs: ['--auth'] }, async (f) => {
    node = f.node;
    const local = await MongoClient.connect(`mongodb://127.0.0.1:${node.port}/?directConnection=true`);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    // Logged in before the address is locked, and kept: its one connection reads serverStatus.
    root = await f.connect(userUri(node.port, 'root', 'pw', '&directConnection=true')).connect();
    for (const user of ['u1', 'u2', 'u3']) await root.db('admin').command({ createUser: user, pwd: 'pw', roles: [] });
  });

  it('ten failures lock the user, right password included, and count in serverStatus; another user logs in', async () => {
    const before = await authentication(root);
    for (let i = 0; i < 10; i += 1) assert.equal(await login(node.port, 'u1', 'wrong', '&directConnection=true'), 18);
    assert.equal(await login(node.port, 'u1', 'pw', '&directConnection=true'), 18);
    assert.equal(await login(node.port, 'u1', 'pw', '&directConnection=true&authMechanism=SCRAM-SHA-1'), 18);
    assert.equal(await login(node.port, 'u2', 'pw', '&directConnection=true'), undefined);
    const after = await authentication(root);
    const sha256 = after.mechanisms['SCRAM-SHA-256']!;
    // The driver starts each login in its hello (speculativeAuthenticate) and proves the password
    // in saslContinue; a locked user's hello gets no answer, so the driver sends saslStart too.
    assert.equal(sha256.speculativeAuthenticate.failed! - before.mechanisms['SCRAM-SHA-256']!.speculativeAuthenticate.failed!, 10);
    assert.equal(sha256.speculativeAuthenticate.successful! - before.mechanisms['SCRAM-SHA-256']!.speculativeAuthenticate.successful!, 1);
    assert.equal(after.mechanisms['SCRAM-SHA-1']!.authenticate.received! - before.mechanisms['SCRAM-SHA-1']!.authenticate.received!, 1);
    assert.deepEqual({ ...after.throttled, attempts: 0 }, { attempts: 0, addressLockouts: 0, userLockouts: 1, addressesLocked: 0, usersLocked: 1 });
    assert.ok(after.throttled.attempts >= 3, JSON.stringify(after.throttled));
  });

  it('twenty failures from one address lock it for every user', async () => {
    // u2's login cleared the address's count; an unknown user fails twice per login (hello,
    // saslStart), each a user of its own so that none is locked first.
    for (let i = 0; i < 9; i += 1) assert.equal(await login(node.port, `nobody${i}`, 'pw', '&directConnection=true'), 18);
    assert.equal(await login(node.port, 'u3', 'pw', '&directConnection=true'), undefined);
    for (let i = 0; i < 10; i += 1) assert.equal(await login(node.port, `nobody${i}`, 'pw', '&directConnection=true'), 18);
    assert.equal(await login(node.port, 'u3', 'pw', '&directConnection=true'), 18);
    const status = await authentication(root);
    assert.equal(status.throttled.addressLockouts, 1);
    assert.equal(status.throttled.addressesLocked, 1);
    // A connection logged in before keeps working.
    assert.equal((await root.db('admin').command({ ping: 1 })).ok, 1);
  });
});

describe('failed logins through a router with --auth', () => {
  let config: SpawnedNode;
  let router: SpawnedRouter;
  let root: MongoClient;
  withProcesses(async (p) => {
    config = await p.node({ role: 'config' });
    router = await p.router(config.port, ['--auth']);
    const local = await MongoClient.connect(router.uri);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    root = await p.connect(userUri(router.port, 'root', 'pw')).connect();
    await root.db('admin').command({ createUser: 'u', pwd: 'pw', roles: [] });
  });

  it('locks a user after ten failures and counts them in the router serverStatus', async () => {
    for (let i = 0; i < 10; i += 1) assert.equal(await login(router.port, 'u', 'wrong'), 18);
    assert.equal(await login(router.port, 'u', 'pw'), 18);
    const status = await authentication(root);
    assert.equal(status.mechanisms['SCRAM-SHA-256']!.speculativeAuthenticate.failed, 10);
    assert.equal(status.throttled.userLockouts, 1);
    assert.equal(status.throttled.usersLocked, 1);
  });
});
