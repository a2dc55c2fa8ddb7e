import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { removeDir, spawnNode, tempDir, type AnyDoc, type SpawnedNode } from '../test/helpers/spawn_node.js';
import { spawnRouter, type SpawnedRouter } from '../test/helpers/spawn_cluster.js';
import { makeTestCertificates } from '../test/helpers/tls_certificates.js';
import { printTable } from './table.js';

// npm run bench -- security: what authentication and TLS cost (issue 23), on a node and through a
// router whose processes all run with a key file and --tlsMode preferTLS, so that plain and TLS
// clients are measured against the same processes in the same run (npm run bench -- node and
// -- router end with the same table for their target). Connection set-up: a new
// client's connect and first ping, without a login, with SCRAM-SHA-256 (the driver's default, in
// its handshake) and SCRAM-SHA-1, in plain text and over TLS. Steady state: findOne by _id from
// 16 concurrent logged-in operations, plain against TLS, rounds alternating.

const CONNECTS = 20;
const FIND_SECONDS = 3;
const ROUNDS = 3;
const DOCS = 10_000;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function connectMs(uri: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < CONNECTS; i++) {
    const started = performance.now();
    const client = await MongoClient.connect(uri, { maxPoolSize: 1 });
    await client.db('admin').command({ ping: 1 });
    times.push(performance.now() - started);
    await client.close();
  }
  return median(times);
}

async function findRate(uri: string): Promise<number> {
  const client = await MongoClient.connect(uri, { maxPoolSize: 16 });
  try {
    const coll = client.db('bench').collection<AnyDoc>('docs');
    await coll.findOne({ _id: 0 });
    const deadline = Date.now() + FIND_SECONDS * 1000;
    let n = 0;
    await Promise.all(Array.from({ length: 16 }, async (_, w) => {
      let i = w;
      while (Date.now() < deadline) {
        await coll.findOne({ _id: (i++ * 7919) % DOCS });
        n += 1;
      }
    }));
    return Math.round(n / FIND_SECONDS);
  } finally {
    await client.close();
  }
}

interface Uris { plain: (extra?: string) => string; tls: (extra?: string) => string }

function uris(port: number, ca: string, login: string, direct: boolean): Uris {
  const base = (extra: string): string => `mongodb://${login}127.0.0.1:${port}/?${direct ? 'directConnection=true&' : ''}authSource=admin${extra}`;
  return { plain: (extra = '') => base(extra), tls: (extra = '') => base(`&tls=true&tlsCAFile=${encodeURIComponent(ca)}${extra}`) };
}

async function measure(label: string, port: number, ca: string, direct: boolean, rows: string[][]): Promise<void> {
  const anonymous = uris(port, ca, '', direct);
  const root = uris(port, ca, 'root:pw@', direct);
  const setup: [string, string][] = [
    ['no login', anonymous.plain()], ['SCRAM-SHA-256', root.plain()], ['SCRAM-SHA-1', root.plain('&authMechanism=SCRAM-SHA-1')],
  ];
  const none = await connectMs(anonymous.plain());
  for (const [name, uri] of setup) {
    const plain = await connectMs(uri);
    const tls = await connectMs(uri.replace('?', `?tls=true&tlsCAFile=${encodeURIComponent(ca)}&`));
    rows.push([`${label}: connect + ping, ${name}`, `${plain.toFixed(1)} ms plain, ${tls.toFixed(1)} ms TLS`, `no login, plain: ${none.toFixed(1)} ms`, `${(plain / none).toFixed(2)} / ${(tls / none).toFixed(2)}`]);
  }
  const plainRates: number[] = [];
  const tlsRates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    plainRates.push(await findRate(root.plain()));
    tlsRates.push(await findRate(root.tls()));
  }
  const plain = median(plainRates);
  const tls = median(tlsRates);
  rows.push([`${label}: findOne by _id, logged in, 16 concurrent`, `${tls} ops/s TLS`, `${plain} ops/s plain`, (tls / plain).toFixed(2)]);
}

// The processes of one target, every one with a key file and --tlsMode preferTLS, a root user
// and DOCS documents: a node, or a config server, a shard and a router. Gives the rows of
// `measure` and stops them.
export async function securityRows(target: 'node' | 'router'): Promise<string[][]> {
  const dir = tempDir('docshard-bench-security-');
  const certs = makeTestCertificates(dir);
  const key = path.join(dir, 'key');
  writeFileSync(key, randomBytes(756).toString('base64'), { mode: 0o600 });
  const flags = ['--keyFile', key, '--tlsMode', 'preferTLS', '--tlsCertificateKeyFile', certs.server, '--tlsCAFile', certs.ca, '--tlsAllowConnectionsWithoutCertificates'];
  const rows: string[][] = [];
  const nodes: SpawnedNode[] = [];
  let router: SpawnedRouter | undefined;
  try {
    if (target === 'node') nodes.push(await spawnNode({ extraArgs: flags }));
    else {
      nodes.push(await spawnNode({ role: 'config', dbpath: tempDir('docshard-cfg-'), extraArgs: flags }), await spawnNode({ role: 'shard', extraArgs: flags }));
      router = await spawnRouter(nodes[0]!.port, flags);
    }
    const direct = router === undefined;
    const port = router?.port ?? nodes[0]!.port;
    const local = await MongoClient.connect(`mongodb://127.0.0.1:${port}/${direct ? '?directConnection=true' : ''}`);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    const root = await MongoClient.connect(uris(port, certs.ca, 'root:pw@', direct).plain());
    if (!direct) await root.db('admin').command({ addShard: `127.0.0.1:${nodes[1]!.port}`, name: 'shard0' });
    await root.db('bench').collection<AnyDoc>('docs').insertMany(Array.from({ length: DOCS }, (_, i) => ({ _id: i, v: `value-${i}` })));
    await root.close();
    await measure(target, port, certs.ca, direct, rows);
  } finally {
    await router?.stop();
    for (const n of [...nodes].reverse()) {
      await n.stop();
      removeDir(n.dbpath);
    }
    removeDir(dir);
  }
  return rows;
}

export const SECURITY_HEADERS = ['with --keyFile and --tlsMode preferTLS', 'docshard', 'baseline', 'ratio'];

export async function runSecurityBench(): Promise<void> {
  printTable(SECURITY_HEADERS, [...await securityRows('node'), ...await securityRows('router')]);
}
