import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { removeDir, tempDir, type AnyDoc } from '../helpers/spawn_node.js';
import { startUp, type Up } from '../helpers/spawn_up.js';

async function stopUp(up: Up, signal: NodeJS.Signals): Promise<number | null> {
  up.child.kill(signal);
  return up.exited;
}

interface ProcessEntry {
  pid: number;
  cmdline: string;
}

// The live processes whose parent is `ppid`, from /proc. The command line tells a process apart
// from a later one that reuses its pid, and a zombie (already dead) has an empty one.
function childrenOf(ppid: number): ProcessEntry[] {
  const found: ProcessEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name, which may itself hold spaces and parentheses.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === ppid) found.push({ pid: Number(name), cmdline: cmdlineOf(Number(name)) });
    } catch {
      // it exited while the directory was read
    }
  }
  return found;
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

const stillRunning = (p: ProcessEntry): boolean => p.cmdline !== '' && cmdlineOf(p.pid) === p.cmdline;

async function waitUntilGone(processes: ProcessEntry[], timeoutMs: number): Promise<ProcessEntry[]> {
  const deadline = Date.now() + timeoutMs;
  while (processes.some(stillRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return processes.filter(stillRunning);
}

// Without --replicas a new directory gets one-member sets, each member named after its set.
const NODE_DIRS = ['config-0', 'shard0-0', 'shard1-0'];

describe('docshard up', () => {
  const dir = tempDir('docshard-up-it-');
  let children: ProcessEntry[] = [];
  // What the first run wrote, to be found again by the second.
  let shardedCollection: AnyDoc;
  let chunks: AnyDoc[] = [];
  let documents: AnyDoc[] = [];
  let running: Up | undefined;

  // Only after a failed test is anything left: leave no process of this file behind.
  after(async () => {
    if (running?.child.exitCode === null) await stopUp(running, 'SIGTERM');
    for (const p of children.filter(stillRunning)) process.kill(p.pid, 'SIGKILL');
    removeDir(dir);
  });

  it('starts a cluster of two shards that serves the driver, and stops every child process on Ctrl-C', { timeout: 180_000 }, async () => {
    const up = running = await startUp(dir, 2);
    children = childrenOf(up.child.pid!);
    const roles = children.map((p) => p.cmdline.split(' ')[2]).sort();
    assert.deepEqual(roles, ['config', 'router', 'shard', 'shard'], `children of up: ${JSON.stringify(children)}`);
    const client = new MongoClient(up.uri);
    try {
      const admin = client.db('admin');
      const shards = await admin.command({ listShards: 1 });
      assert.deepEqual(shards.shards.map((s: AnyDoc) => s._id).sort(), ['shard0', 'shard1']);
      // Each shard a one-member set, added in set form.
      for (const { _id, host } of await client.db('config').collection<AnyDoc>('shards').find().toArray()) {
        assert.match(String(host), new RegExp(`^${String(_id)}/127\\.0\\.0\\.\\d+:\\d+$`));
      }
      const items = client.db('app').collection<AnyDoc>('items');
      await items.insertOne({ _id: 1, name: 'kept' });

      // A change stream needs its shards to be sets (a single process answers 40573).
      const stream = items.watch();
      try {
        await stream.tryNext();
        await items.insertOne({ _id: 2, name: 'watched' });
        const event = await stream.next();
        assert.equal(event.operationType, 'insert');
        assert.deepEqual(event.operationType === 'insert' ? event.fullDocument : undefined, { _id: 2, name: 'watched' });
      } finally {
        await stream.close();
      }

      // A sharded collection with one chunk on each shard. Without the balancer nothing moves
      // between this snapshot and the restart.
      await admin.command({ balancerStop: 1 });
      await admin.command({ shardCollection: 'app.sharded', key: { k: 1 } });
      const sharded = client.db('app').collection<AnyDoc>('sharded');
      await sharded.insertMany(Array.from({ length: 1000 }, (_, i) => ({ _id: i, k: i, pad: 'x'.repeat(50) })));
      await admin.command({ split: 'app.sharded', middle: { k: 500 } });
      const config = client.db('config');
      shardedCollection = await config.collection<AnyDoc>('collections').findOne({ _id: 'app.sharded' });
      const upper = await config.collection<AnyDoc>('chunks').findOne({ uuid: shardedCollection.uuid, min: { k: 500 } });
      await admin.command({ moveChunk: 'app.sharded', find: { k: 500 }, to: upper.shard === 'shard0' ? 'shard1' : 'shard0' });
      chunks = await config.collection<AnyDoc>('chunks').find({ uuid: shardedCollection.uuid }, { projection: { _id: 0, min: 1, max: 1, shard: 1, lastmod: 1 } }).sort({ min: 1 }).toArray();
      assert.deepEqual(new Set(chunks.map((c) => c.shard)), new Set(['shard0', 'shard1']));
      documents = await sharded.find().sort({ _id: 1 }).toArray();
      assert.equal(documents.length, 1000);
    } finally {
      await client.close();
    }
    assert.equal(await stopUp(up, 'SIGINT'), 0);
    assert.deepEqual(children.filter(stillRunning), [], 'child processes outlived up');
  });

  it('restarts on the same directory with the same shards and data, sharded collections included', { timeout: 180_000 }, async () => {
    const up = running = await startUp(dir, 2);
    const client = new MongoClient(up.uri);
    try {
      const shards = await client.db('admin').command({ listShards: 1 });
      assert.equal(shards.shards.length, 2);
      assert.deepEqual(await client.db('app').collection<AnyDoc>('items').findOne({ _id: 1 }), { _id: 1, name: 'kept' });
      const config = client.db('config');
      const collection = await config.collection<AnyDoc>('collections').findOne({ _id: 'app.sharded' });
      assert.deepEqual(collection, shardedCollection);
      const chunksNow = await config.collection<AnyDoc>('chunks').find({ uuid: collection.uuid }, { projection: { _id: 0, min: 1, max: 1, shard: 1, lastmod: 1 } }).sort({ min: 1 }).toArray();
      assert.deepEqual(chunksNow, chunks);
      assert.deepEqual(await client.db('app').collection<AnyDoc>('sharded').find().sort({ _id: 1 }).toArray(), documents);
    } finally {
      await client.close();
    }
    assert.equal(await stopUp(up, 'SIGTERM'), 0);
  });

  // Nobody is left to stop the children: each sees its supervisor pipe close and shuts down.
  it('refuses a second up on the directory, naming the first; kill -9 of up leaves no child behind, and up starts there again', { timeout: 180_000 }, async () => {
    const up = running = await startUp(dir, 2);
    await assert.rejects(startUp(dir, 2), (err: Error) => {
      assert.match(err.message, /^up exited with 1:/);
      assert.ok(err.message.includes(`${path.join(dir, 'up.lock')}: process ${up.child.pid} holds it`), err.message);
      return true;
    });
    children = childrenOf(up.child.pid!);
    assert.equal(children.filter((p) => p.cmdline.includes('docshard.js')).length, 4, JSON.stringify(children));
    up.child.kill('SIGKILL');
    await up.exited;
    assert.deepEqual(await waitUntilGone(children, 5000), [], 'child processes outlived up by 5 s');
    for (const name of NODE_DIRS) assert.equal(existsSync(path.join(dir, name, 'mongod.lock')), false, `${name} did not shut down cleanly`);

    const again = running = await startUp(dir, 2);
    const client = new MongoClient(again.uri);
    try {
      assert.deepEqual(await client.db('app').collection<AnyDoc>('items').findOne({ _id: 1 }), { _id: 1, name: 'kept' });
    } finally {
      await client.close();
    }
    assert.equal(await stopUp(again, 'SIGTERM'), 0);
  });

  it('starts again on its directory after kill -9 of one of its nodes, taking over that node\'s lock', { timeout: 180_000 }, async () => {
    const up = running = await startUp(dir, 2);
    children = childrenOf(up.child.pid!);
    const shard0Pid = Number(readFileSync(path.join(dir, 'shard0-0', 'mongod.lock'), 'utf8').split('\n')[0]);
    assert.ok(children.some((p) => p.pid === shard0Pid), `shard0 (${shard0Pid}) is a child of up`);
    process.kill(shard0Pid, 'SIGKILL');
    assert.equal(await up.exited, 1, 'up stops the others when a node dies');
    assert.equal(Number(readFileSync(path.join(dir, 'shard0-0', 'mongod.lock'), 'utf8').split('\n')[0]), shard0Pid, 'the killed node left its lock');

    const again = running = await startUp(dir, 2);
    const shard0Log = readFileSync(path.join(dir, 'logs', 'shard0-0.log'), 'utf8');
    assert.ok(shard0Log.includes(`"stalePid":${shard0Pid},"msg":"Took over a lock file its dead holder left"`), 'shard0 took over its stale lock');
    const client = new MongoClient(again.uri);
    try {
      assert.deepEqual(await client.db('app').collection<AnyDoc>('sharded').find().sort({ _id: 1 }).toArray(), documents);
    } finally {
      await client.close();
    }
    assert.equal(await stopUp(again, 'SIGTERM'), 0);
  });
});
