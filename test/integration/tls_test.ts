import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { removeDir, runDocshard, spawnNode, tempDir, type SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { makeTestCertificates, type TestCertificates } from '../helpers/tls_certificates.js';
import { withProcesses } from '../helpers/fixtures.js';

// TLS (--tlsMode) with real processes and the official driver, on certificates made with openssl
// for this run (localhost and 127.0.0.1 in their SAN): requireTLS refuses plain connections and
// carries the cluster's own traffic over TLS, preferTLS and allowTLS serve both on one port, and
// client certificates are checked against the CA.

function tlsFlags(certs: TestCertificates, mode: string, extra: string[] = ['--tlsAllowConnectionsWithoutCertificates']): string[] {
  return ['--tlsMode', mode, '--tlsCertificateKeyFile', certs.server, '--tlsCAFile', certs.ca, ...extra];
}

function tlsUri(port: number, certs: TestCertificates, extra = '', serverSelectionTimeoutMS = 5000): string {
  return `mongodb://127.0.0.1:${port}/?tls=true&tlsCAFile=${encodeURIComponent(certs.ca)}&serverSelectionTimeoutMS=${serverSelectionTimeoutMS}${extra}`;
}

async function ping(uri: string): Promise<unknown> {
  const client = new MongoClient(uri);
  try {
    await client.connect();
    return (await client.db('admin').command({ ping: 1 })).ok;
  } catch (err) {
    return err;
  } finally {
    await client.close();
  }
}

// A plain hello on a raw socket: the bytes the server sends back before it closes the connection.
function plainHello(port: number): Promise<number> {
  const body = Buffer.from([0x13, 0, 0, 0, 0x10, 0x69, 0x73, 0x6d, 0x61, 0x73, 0x74, 0x65, 0x72, 0, 1, 0, 0, 0, 0]);
  const query = Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from('admin.$cmd\0'), Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), body]);
  const header = Buffer.alloc(16);
  header.writeInt32LE(16 + query.length, 0);
  header.writeInt32LE(1, 4);
  header.writeInt32LE(2004, 12);
  return new Promise((resolve, reject) => {
    let received = 0;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.concat([header, query])));
    socket.on('data', (d) => { received += d.length; });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('a cluster with --tlsMode requireTLS and a key file on every process', () => {
  let dir: string;
  let certs: TestCertificates;
  let keyArgs: string[];
  let config: SpawnedNode;
  let shards: SpawnedNode[];
  let router: SpawnedRouter;
  withProcesses(async (p) => {
    dir = p.dir('docshard-tls-');
    certs = makeTestCertificates(dir);
    // The processes log in to each other as __system over TLS.
    const key = path.join(dir, 'key');
    writeFileSync(key, randomBytes(48).toString('base64'), { mode: 0o600 });
    keyArgs = ['--keyFile', key];
    config = await p.node({ role: 'config', extraArgs: [...tlsFlags(certs, 'requireTLS'), ...keyArgs] });
    shards = await Promise.all([0, 1].map(() => p.node({ role: 'shard', extraArgs: [...tlsFlags(certs, 'requireTLS'), ...keyArgs] })));
    router = await p.router(config.port, [...tlsFlags(certs, 'requireTLS'), ...keyArgs]);
  });

  it('refuses plain connections on every port, answering nothing', async () => {
    for (const port of [router.port, config.port, shards[0]!.port]) {
      assert.equal(await plainHello(port), 0);
      const err = await ping(`mongodb://127.0.0.1:${port}/?serverSelectionTimeoutMS=1500&directConnection=true`);
      assert.ok(err instanceof Error && err.name === 'MongoServerSelectionError', String(err));
    }
  });

  it('serves the driver over TLS through the router to TLS shards: shards join, data moves', async () => {
    const local = await MongoClient.connect(tlsUri(router.port, certs));
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    const client = await MongoClient.connect(tlsUri(router.port, certs, '&authSource=admin').replace('mongodb://', 'mongodb://root:pw@'));
    try {
      const admin = client.db('admin');
      for (const [i, shard] of shards.entries()) await admin.command({ addShard: `127.0.0.1:${shard.port}`, name: `shard${i}` });
      await admin.command({ enableSharding: 'app', primaryShard: 'shard0' });
      await admin.command({ shardCollection: 'app.c', key: { k: 1 } });
      const c = client.db('app').collection<{ _id: number; k: number }>('c');
      await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, k: i })));
      await admin.command({ split: 'app.c', middle: { k: 10 } });
      await admin.command({ moveChunk: 'app.c', find: { k: 10 }, to: 'shard1', _waitForDelete: true });
      assert.equal(await c.countDocuments({}), 20);
      assert.deepEqual(await c.findOne({ k: 15 }), { _id: 15, k: 15 });
      const opts = await admin.command({ getCmdLineOpts: 1 });
      assert.equal(opts.parsed.net.tls.mode, 'requireTLS');
    } finally {
      await client.close();
    }
    const direct = await MongoClient.connect(tlsUri(shards[1]!.port, certs, `&directConnection=true&authSource=local&authMechanism=SCRAM-SHA-256`).replace('mongodb://', `mongodb://__system:${encodeURIComponent(readFileSync(keyArgs[1]!, 'utf8'))}@`));
    try {
      assert.equal(await direct.db('app').collection('c').countDocuments({}), 10);
    } finally {
      await direct.close();
    }
  });

  it('a driver that does not trust the CA cannot connect', async () => {
    const err = await ping(`mongodb://127.0.0.1:${router.port}/?tls=true&tlsCAFile=${encodeURIComponent(certs.stranger)}&serverSelectionTimeoutMS=1500`);
    assert.ok(err instanceof Error && err.name === 'MongoServerSelectionError', String(err));
  });
});

describe('preferTLS and allowTLS serve TLS and plain text on one port', () => {
  let dir: string;
  let certs: TestCertificates;
  const nodes: SpawnedNode[] = [];
  before(() => {
    dir = tempDir('docshard-tls-');
    certs = makeTestCertificates(dir);
  });
  after(async () => {
    for (const n of nodes) {
      await n.stop();
      removeDir(n.dbpath);
    }
    removeDir(dir);
  });

  for (const mode of ['preferTLS', 'allowTLS']) {
    it(`${mode}: a plain client and a TLS client both run commands`, async () => {
      const node = await spawnNode({ extraArgs: tlsFlags(certs, mode) });
      nodes.push(node);
      assert.equal(await ping(`mongodb://127.0.0.1:${node.port}/?directConnection=true`), 1);
      assert.equal(await ping(tlsUri(node.port, certs, '&directConnection=true')), 1);
      const client = await MongoClient.connect(tlsUri(node.port, certs, '&directConnection=true'));
      try {
        // A message larger than one TLS record goes through whole.
        const big = 'x'.repeat(1 << 20);
        await client.db('t').collection('c').insertOne({ _id: 1, big } as never);
        assert.equal(((await client.db('t').collection('c').findOne({ _id: 1 } as never)) as { big: string } | null)?.big.length, big.length);
      } finally {
        await client.close();
      }
    });
  }

  it('with a CA and no --tlsAllowConnectionsWithoutCertificates, a client must present a certificate the CA signed', async () => {
    const node = await spawnNode({ extraArgs: tlsFlags(certs, 'requireTLS', []) });
    nodes.push(node);
    const without = await ping(tlsUri(node.port, certs, '&directConnection=true', 1500));
    assert.ok(without instanceof Error, String(without));
    const stranger = await ping(tlsUri(node.port, certs, `&directConnection=true&tlsCertificateKeyFile=${encodeURIComponent(certs.stranger)}`, 1500));
    assert.ok(stranger instanceof Error, String(stranger));
    assert.equal(await ping(tlsUri(node.port, certs, `&directConnection=true&tlsCertificateKeyFile=${encodeURIComponent(certs.server)}`)), 1);
  });

  it('refuses to start with a TLS mode and no certificate, or an unknown mode', async () => {
    const dbpath = tempDir();
    try {
      const missing = await runDocshard(['shard', '--port', '0', '--dbpath', dbpath, '--tlsMode', 'requireTLS']);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /need tlsCertificateKeyFile when TLS is enabled/);
      const unknown = await runDocshard(['router', '--port', '0', '--configdb', '127.0.0.1:1', '--tlsMode', 'sometimes', '--tlsCertificateKeyFile', certs.server]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /Invalid value for tlsMode: sometimes/);
    } finally {
      removeDir(dbpath);
    }
  });
});
