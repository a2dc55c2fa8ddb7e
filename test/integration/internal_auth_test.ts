import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { removeDir, runDocshard, tempDir, type SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { as, refusal } from '../helpers/server_errors.js';
import { withProcesses } from '../helpers/fixtures.js';

// Internal authentication (--keyFile) with real processes and the official driver: every process
// of the cluster holds the key and they log in to each other as __system; a process without it,
// or with another key, cannot join or be talked to; a bad key file refuses to start.

function keyFile(dir: string, name: string, contents: string, mode = 0o600): string {
  const file = path.join(dir, name);
  writeFileSync(file, contents, { mode });
  return file;
}

function userUri(port: number, user: string, pwd: string, authSource = 'admin'): string {
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@127.0.0.1:${port}/?authSource=${authSource}&directConnection=true`;
}

describe('a key file that breaks the rules refuses to start, with a clear message', () => {
  let dir: string;
  before(() => { dir = tempDir('docshard-keys-'); });
  after(() => removeDir(dir));

  for (const role of ['shard', 'config', 'router'] as const) {
    it(`${role}: mode 0644, a bad character, too short, too long`, async () => {
      const roleArgs = role === 'router' ? ['--configdb', '127.0.0.1:1'] : ['--dbpath', path.join(dir, `db-${role}`)];
      const cases = [
        [keyFile(dir, `${role}-open`, 'abcdefgh', 0o644), /permissions on .*-open are too open/],
        [keyFile(dir, `${role}-char`, 'abc$defgh'), /invalid char in key file .*-char: \$/],
        [keyFile(dir, `${role}-short`, ' ab\ncd\te '), /security key in .*-short has length 5, must be between 6 and 1024 chars/],
        [keyFile(dir, `${role}-long`, 'a'.repeat(1025)), /has length 1025, must be between 6 and 1024 chars/],
        [path.join(dir, 'missing'), /Error reading file .*missing/],
      ] as const;
      for (const [file, message] of cases) {
        const run = await runDocshard([role, '--port', '0', ...roleArgs, '--keyFile', file]);
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, message);
      }
    });
  }
});

describe('a cluster whose processes hold a key file', () => {
  let dir: string;
  let key: string;
  let config: SpawnedNode;
  let shards: SpawnedNode[];
  let outsiders: SpawnedNode[];
  let router: SpawnedRouter;
  let keyless: SpawnedRouter;
  withProcesses(async (p) => {
    dir = p.dir('docshard-keyed-');
    // Whitespace and line breaks in the file are not part of the key.
    const secret = randomBytes(48).toString('base64');
    key = keyFile(dir, 'key', `${secret.slice(0, 30)}\n  ${secret.slice(30)}\n`);
    const other = keyFile(dir, 'other', randomBytes(48).toString('base64'));
    config = await p.node({ role: 'config', extraArgs: ['--keyFile', key] });
    shards = await Promise.all([p.node({ role: 'shard', extraArgs: ['--keyFile', key] }), p.node({ role: 'shard', extraArgs: ['--keyFile', key] })]);
    outsiders = await Promise.all([p.node({ role: 'shard' }), p.node({ role: 'shard', extraArgs: ['--keyFile', other] })]);
    router = await p.router(config.port, ['--keyFile', key]);
    keyless = await p.router(config.port);
  });

  it('a key file turns authentication on: nothing runs before login, the first user comes from this host', async () => {
    await as(`mongodb://127.0.0.1:${shards[0]!.port}/?directConnection=true`, async (client) => {
      const err = await refusal(() => client.db('a').collection('c').findOne({}));
      assert.equal(err.code, 13);
    });
    await as(router.uri, async (client) => {
      const err = await refusal(() => client.db('a').collection('c').findOne({}));
      assert.equal(err.errmsg, 'command find requires authentication');
      await client.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    });
    await as(userUri(router.port, 'root', 'pw'), async (client) => {
      const opts = await client.db('admin').command({ getCmdLineOpts: 1 });
      assert.deepEqual(opts.parsed.security, { authorization: 'enabled', keyFile: key });
    });
  });

  it('the router, the config server and the shards talk to each other as __system: shards join, data moves', async () => {
    await as(userUri(router.port, 'root', 'pw'), async (client) => {
      const admin = client.db('admin');
      for (const [i, shard] of shards.entries()) await admin.command({ addShard: `127.0.0.1:${shard.port}`, name: `shard${i}` });
      await admin.command({ enableSharding: 'a', primaryShard: 'shard0' });
      await admin.command({ shardCollection: 'a.c', key: { k: 1 } });
      const c = client.db('a').collection<{ _id: number; k: number }>('c');
      await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, k: i })));
      await admin.command({ split: 'a.c', middle: { k: 10 } });
      await admin.command({ moveChunk: 'a.c', find: { k: 10 }, to: 'shard1', _waitForDelete: true });
      assert.equal(await c.countDocuments({}), 20);
      assert.deepEqual(await c.findOne({ k: 15 }), { _id: 15, k: 15 });
    });
    // The moved documents are on shard1, which nobody but the cluster's processes can read.
    await as(userUri(shards[1]!.port, '__system', keyOf(key), 'local'), async (client) => {
      assert.equal(await client.db('a').collection('c').countDocuments({}), 10);
    });
  });

  it('a shard without the key, or with another, cannot be added', async () => {
    await as(userUri(router.port, 'root', 'pw'), async (client) => {
      for (const [i, outsider] of outsiders.entries()) {
        const err = await refusal(() => client.db('admin').command({ addShard: `127.0.0.1:${outsider.port}`, name: `outsider${i}` }));
        // As mongos answers a shard it cannot log in to: OperationFailed, naming the host and why.
        assert.equal(err.codeName, 'OperationFailed', err.errmsg);
        assert.match(err.errmsg, new RegExp(`127\\.0\\.0\\.1:${outsider.port}: internal authentication failed: Authentication failed\\.`));
      }
      const listed = await client.db('admin').command({ listShards: 1 });
      assert.deepEqual(listed.shards.map((s: { _id: string }) => s._id).sort(), ['shard0', 'shard1']);
    });
  });

  it('a router without the key cannot talk to the cluster', async () => {
    await as(keyless.uri, async (client) => {
      const err = await refusal(() => client.db('a').collection('c').findOne({ k: 1 }));
      assert.equal(err.code, 13);
      assert.match(err.errmsg, /requires authentication/);
    });
  });

  it('a wrong key is refused like a wrong password', async () => {
    const err = await refusal(() => MongoClient.connect(userUri(config.port, '__system', 'AAAAAAAA', 'local')).then((c) => c.close()));
    assert.equal(err.code, 18);
  });
});

// The key as the processes read it: the file without its whitespace.
function keyOf(file: string): string {
  return readFileSync(file, 'utf8').replace(/\s/g, '');
}
