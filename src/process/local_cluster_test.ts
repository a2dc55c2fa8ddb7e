import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { LocalCluster } from './local_cluster.js';
import { readClusterFile } from './cluster_file.js';

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/helpers/fake_docshard.js');

// The stand-in roles journal what happens to them (test/helpers/fake_docshard_role.ts).
describe('LocalCluster (with stand-in roles)', () => {
  let dir: string;
  let journalFile: string;
  const clusters: LocalCluster[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'docshard-up-'));
    journalFile = path.join(dir, 'journal.txt');
    process.env.DOCSHARD_FAKE_JOURNAL = journalFile;
    delete process.env.DOCSHARD_FAKE_FAIL_ADD_SHARD;
  });

  afterEach(async () => {
    for (const cluster of clusters.splice(0)) await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // Single processes unless told otherwise: most tests here are about starting and stopping, which
  // is the same for the members of sets. 'unsaid': no count given, as `up` without --replicas.
  function cluster(shards = 2, replicas: number | 'unsaid' = 0): LocalCluster {
    const c = new LocalCluster({ shards, port: 0, httpPort: 0, dir: path.join(dir, 'data'), logger: pino({ level: 'silent' }), bin: FAKE_BIN, ...(replicas === 'unsaid' ? {} : { replicas }) });
    clusters.push(c);
    return c;
  }

  function journal(): string[][] {
    return existsSync(journalFile) ? readFileSync(journalFile, 'utf8').trim().split('\n').map((l) => l.split(' ')) : [];
  }

  function portOf(name: string, journalLines = journal()): number {
    const starts = journalLines.filter(([event, n]) => event === 'start' && n === name);
    return Number(starts.at(-1)![2]);
  }

  it('starts a config server, the shards and a router, and adds each shard through the router', async () => {
    const ready = await cluster(2).start();
    assert.equal(ready.uri, `mongodb://127.0.0.1:${portOf('router')}`);
    const addShards = journal().filter(([event]) => event === 'addShard').map(([, host, name]) => `${name}@${host}`);
    assert.deepEqual(addShards, [`shard0@127.0.0.1:${portOf('shard0')}`, `shard1@127.0.0.1:${portOf('shard1')}`]);
  });

  it('stops the router first, then the shards, then the config server', async () => {
    const c = cluster(2);
    await c.start();
    await c.stop();
    const stops = journal().filter(([event]) => event === 'stop').map(([, name]) => name);
    assert.equal(stops[0], 'router');
    assert.deepEqual(new Set(stops.slice(1, 3)), new Set(['shard0', 'shard1']));
    assert.equal(stops[3], 'config');
  });

  it('persists the ports and restarts the config server and the shards on them', async () => {
    const first = cluster(2);
    await first.start();
    await first.stop();
    const before = journal();
    assert.deepEqual(readClusterFile(path.join(dir, 'data')), {
      configPort: portOf('config', before),
      shards: [{ name: 'shard0', port: portOf('shard0', before) }, { name: 'shard1', port: portOf('shard1', before) }],
    });
    await cluster(2).start();
    for (const name of ['config', 'shard0', 'shard1']) assert.equal(portOf(name), portOf(name, before), name);
    const addShards = journal().filter(([event]) => event === 'addShard');
    assert.equal(addShards.length, 4, 'a restart adds the same shards again');
  });

  it('keeps starting every shard it already has when asked for fewer', async () => {
    const first = cluster(2);
    await first.start();
    await first.stop();
    await cluster(1).start();
    const restarted = journal().filter(([event]) => event === 'start').slice(4).map(([, name]) => name);
    assert.deepEqual(new Set(restarted), new Set(['config', 'shard0', 'shard1', 'router']));
  });

  it('reports a child that dies on its own as an unexpected exit', async () => {
    const c = cluster(2);
    await c.start();
    const [, , , pid] = journal().find(([event, name]) => event === 'start' && name === 'shard1')!;
    process.kill(Number(pid), 'SIGKILL');
    const exit = await c.unexpectedExit;
    assert.deepEqual(exit, { name: 'shard1', code: null, signal: 'SIGKILL' });
  });

  it('fails to start when addShard fails, and stop then ends the children it started', async () => {
    process.env.DOCSHARD_FAKE_FAIL_ADD_SHARD = '1';
    const c = cluster(1);
    await assert.rejects(c.start(), /addShard shard0 failed: refused by the fake \(OperationFailed\)/);
    await c.stop();
    assert.equal(journal().filter(([event]) => event === 'stop').length, 3);
  });

  it('appends the output of each child to its own log file', async () => {
    await cluster(1).start();
    // The file is written behind the pipe, so the last child's line may land a moment later.
    for (const name of ['config', 'shard0', 'router']) {
      const read = (): string => readFileSync(path.join(dir, 'data', 'logs', `${name}.log`), 'utf8');
      for (let waited = 0; waited < 5000 && !read().includes('"msg":"Waiting for connections"'); waited += 20) await new Promise((r) => setTimeout(r, 20));
      assert.match(read(), /"msg":"Waiting for connections"/, name);
    }
  });

  it('starts a new directory as one-member sets when no count is given: each set initiated, each shard added in set form', async () => {
    await cluster(2, 'unsaid').start();
    const hostOf = (name: string): string => `127.0.0.1:${portOf(name)}`;
    const initiated = journal().filter(([event]) => event === 'replSetInitiate').map(([, set, hosts]) => `${set} ${hosts}`);
    assert.deepEqual(new Set(initiated), new Set([`cfg ${hostOf('config-0')}`, `shard0 ${hostOf('shard0-0')}`, `shard1 ${hostOf('shard1-0')}`]));
    const addShards = journal().filter(([event]) => event === 'addShard').map(([, host, name]) => `${name}@${host}`);
    assert.deepEqual(addShards, [`shard0@shard0/${hostOf('shard0-0')}`, `shard1@shard1/${hostOf('shard1-0')}`]);
    assert.equal(readClusterFile(path.join(dir, 'data'))!.replicas, 1);
  });

  it('starts a directory as it was made when no count is given, and refuses a count that contradicts it', async () => {
    const singles = cluster(2, 0);
    await singles.start();
    await singles.stop();
    await assert.rejects(cluster(2, 1).start(), new RegExp(`^Error: ${path.join(dir, 'data')} holds a cluster of single processes: start it with --replicas 0 or without --replicas$`));
    const again = cluster(2, 'unsaid');
    await again.start();
    await again.stop();
    const started = journal().filter(([event]) => event === 'start').map(([, name]) => name);
    assert.deepEqual(new Set(started), new Set(['config', 'shard0', 'shard1', 'router']), 'single processes both times');
    assert.equal(journal().filter(([event]) => event === 'replSetInitiate').length, 0);

    rmSync(path.join(dir, 'data'), { recursive: true });
    const sets = cluster(1, 3);
    await sets.start();
    await sets.stop();
    await assert.rejects(cluster(1, 0).start(), /holds a cluster of 3-member sets: start it with --replicas 3 or without --replicas$/);
    const setsAgain = cluster(1, 'unsaid');
    await setsAgain.start();
    const restarted = journal().filter(([event]) => event === 'replSetInitiate').slice(2).map(([, set, hosts]) => `${set} ${hosts!.split(',').length}`);
    assert.deepEqual(new Set(restarted), new Set(['cfg 3', 'shard0 3']), 'the 3-member sets again');
  });
});
