import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { BSON } from 'bson';
import { cpuSeconds } from './proc_cpu.js';
import { open } from 'lmdb';
import { MongoClient } from 'mongodb';
import { removeDir, spawnNode, tempDir, type AnyDoc } from '../test/helpers/spawn_node.js';
import { printTable } from './table.js';
import { SECURITY_HEADERS, securityRows } from './security_bench.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BATCH = 1000;
const INSERT_DOCS = 100_000;
const FIND_SECONDS = 4;
const INSERT_ROUNDS = 3;

function doc(i: number): Record<string, unknown> {
  return { _id: i, k: i, name: `user-${i}`, email: `user-${i}@example.com`, score: i * 1.5, tags: ['alpha', 'beta', 'gamma'], note: 'x'.repeat(80) };
}

// The node process's user + system CPU time, in µs, from /proc (clock ticks of 10 ms): steadier
// than throughput on a shared machine, where the client and other processes take the cores.
function nodeCpuUs(pid: number): number {
  return cpuSeconds(pid) * 1e6;
}

function perOp(cpuUs: number, count: number): string {
  return `${(cpuUs / count).toFixed(1)} µs`;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1]!;
}

function rate(count: number, ms: number): number {
  return Math.round((count / ms) * 1000);
}

function opMsg(requestId: number, body: object): Buffer {
  const b = Buffer.from(BSON.serialize(body));
  const out = Buffer.alloc(21 + b.length);
  out.writeInt32LE(out.length, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(2013, 12);
  b.copy(out, 21);
  return out;
}

// N connections, each with one request in flight, for `seconds`: requests per second.
async function pingPong(port: number, connections: number, seconds: number, makeRequest: (id: number) => Buffer): Promise<number> {
  let done = 0;
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, () => new Promise<void>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let buffer = Buffer.alloc(0);
    let id = 1;
    socket.on('connect', () => socket.write(makeRequest(id++)));
    socket.on('data', (d) => {
      buffer = buffer.length === 0 ? d : Buffer.concat([buffer, d]);
      while (buffer.length >= 4 && buffer.length >= buffer.readInt32LE(0)) {
        buffer = buffer.subarray(buffer.readInt32LE(0));
        done += 1;
        if (Date.now() > deadline) {
          socket.destroy();
          resolve();
          return;
        }
        socket.write(makeRequest(id++));
      }
    });
    socket.on('error', reject);
  })));
  return rate(done, seconds * 1000);
}

async function startEcho(replySize: number): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'echo_server.ts'), String(replySize)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => createInterface({ input: child.stdout! }).once('line', (l) => resolve(Number(l))));
  return { port, stop: () => child.kill('SIGKILL') };
}

function rawLmdbPuts(docs: Buffer[]): number {
  const dir = tempDir('docshard-bench-lmdb-');
  const db = open({ path: dir, keyEncoding: 'binary', encoding: 'binary' });
  const started = performance.now();
  for (let b = 0; b < docs.length; b += BATCH) {
    db.transactionSync(() => {
      for (let i = b; i < Math.min(b + BATCH, docs.length); i++) {
        const key = Buffer.alloc(8);
        key.writeBigUInt64BE(BigInt(i));
        db.putSync(key, docs[i]!);
      }
    });
  }
  const ms = performance.now() - started;
  void db.close();
  removeDir(dir);
  return rate(docs.length, ms);
}

export async function runNodeBench(): Promise<void> {
  const node = await spawnNode();
  const client = new MongoClient(node.uri, { maxPoolSize: 16 });
  const rows: [string, string, string, string, string][] = [];
  const pid = node.child.pid!;
  try {
    const coll = client.db('bench').collection<AnyDoc>('docs');
    const sample = Buffer.from(BSON.serialize(doc(1)));

    // Sequential batches leave each side idle while the other works (driver encoding here, the
    // node's decoding and commit there); several writers let both run at once, as applications do.
    const encoded = Array.from({ length: INSERT_DOCS }, (_, i) => Buffer.from(BSON.serialize(doc(i))));
    const insertAll = async (writers: number): Promise<number> => {
      const started = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: writers }, async () => {
        for (let b = next; b < INSERT_DOCS; b = next) {
          next += BATCH;
          await coll.insertMany(Array.from({ length: BATCH }, (_, j) => doc(b + j)), { ordered: true });
        }
      }));
      return rate(INSERT_DOCS, performance.now() - started);
    };
    // The first batches after start-up run while V8 is still compiling the insert path, in the
    // driver and in the node alike; the raw baseline's few lines are compiled at once.
    await coll.drop().catch(() => undefined);
    await insertAll(1);
    for (const writers of [1, 4]) {
      // Rounds alternate the baseline with the node, so a busy moment on this shared machine
      // falls on both; medians of the rounds are compared.
      const raws: number[] = [];
      const drivers: number[] = [];
      let cpu = 0;
      for (let round = 0; round < INSERT_ROUNDS; round++) {
        raws.push(rawLmdbPuts(encoded));
        await coll.drop();
        const before = nodeCpuUs(pid);
        drivers.push(await insertAll(writers));
        cpu += nodeCpuUs(pid) - before;
      }
      const raw = median(raws);
      const driverInserts = median(drivers);
      const spread = drivers.map((d, i) => d / raws[i]!).sort((a, b) => a - b);
      rows.push([`insertMany, batches of 1000 ~${sample.length} B docs, ${writers} writer(s)`, `${driverInserts} docs/s`, `raw LMDB puts: ${raw}/s`, `${(driverInserts / raw).toFixed(2)} (rounds ${spread[0]!.toFixed(2)}–${spread[spread.length - 1]!.toFixed(2)})`, perOp(cpu, INSERT_DOCS * INSERT_ROUNDS)]);
    }

    const findRequest = (id: number): Buffer => opMsg(id, { find: 'docs', filter: { _id: (id * 7919) % INSERT_DOCS }, limit: 1, singleBatch: true, $db: 'bench' });
    const replySize = await measureReplySize(node.port, findRequest(1));
    const echo = await startEcho(replySize);
    try {
      for (const conns of [1, 16]) {
        const cpu = nodeCpuUs(pid);
        const found = await pingPong(node.port, conns, FIND_SECONDS, findRequest);
        const findCpu = nodeCpuUs(pid) - cpu;
        const pong = await pingPong(echo.port, conns, FIND_SECONDS, findRequest);
        rows.push([`find by _id, raw OP_MSG, ${conns} conn`, `${found} ops/s`, `TCP ping-pong: ${pong}/s`, (found / pong).toFixed(2), perOp(findCpu, found * FIND_SECONDS)]);
      }
    } finally {
      echo.stop();
    }
    for (const conns of [1, 16]) {
      const deadline = Date.now() + FIND_SECONDS * 1000;
      const cpu = nodeCpuUs(pid);
      let n = 0;
      await Promise.all(Array.from({ length: conns }, async (_, w) => {
        let i = w;
        while (Date.now() < deadline) {
          await coll.findOne({ _id: (i++ * 7919) % INSERT_DOCS });
          n += 1;
        }
      }));
      rows.push([`findOne by _id via driver, ${conns} concurrent`, `${rate(n, FIND_SECONDS * 1000)} ops/s`, '', '', perOp(nodeCpuUs(pid) - cpu, n)]);
    }

    await coll.createIndex({ k: 1 });
    const scanCpu = nodeCpuUs(pid);
    const scanStart = performance.now();
    let scanned = 0;
    for (let r = 0; r < 5; r++) {
      const lo = r * 10_000;
      scanned += (await coll.find({ k: { $gte: lo, $lt: lo + 20_000 } }).toArray()).length;
    }
    rows.push(['indexed range scan (find k in [a, a+20000))', `${rate(scanned, performance.now() - scanStart)} docs/s`, '', '', perOp(nodeCpuUs(pid) - scanCpu, scanned)]);
  } finally {
    await client.close();
    await node.stop();
    removeDir(node.dbpath);
  }
  printTable(['measure', 'docshard', 'baseline', 'ratio', 'node CPU/op'], rows);
  process.stdout.write('\n');
  // With authentication and TLS on (issue 23): another node, set up as security_bench.ts does.
  printTable(SECURITY_HEADERS, await securityRows('node'));
}

async function measureReplySize(port: number, request: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(request));
    let buffer = Buffer.alloc(0);
    s.on('data', (d) => {
      buffer = Buffer.concat([buffer, d]);
      if (buffer.length >= 4 && buffer.length >= buffer.readInt32LE(0)) {
        s.destroy();
        resolve(buffer.readInt32LE(0));
      }
    });
    s.on('error', reject);
  });
}

