import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import { MongoClient, MongoServerError } from 'mongodb';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { freePort } from '../helpers/free_port.js';
import { removeDir, restartNode, spawnNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';

interface Sample { name: string; metrics: Array<{ value?: string; labels?: Record<string, string> }> }

// One metric's samples as {labels, value}, from a member's /metrics.
async function scrape(httpPort: number, name: string): Promise<Array<{ labels: Record<string, string>; value: number }>> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
  const family = (parsePrometheusTextFormat(await res.text()) as Sample[]).find((s) => s.name === name);
  return (family?.metrics ?? []).map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }));
}


// Three real `docshard shard --replSet rs0` processes over TCP: replSetInitiate through the driver,
// one primary as the driver's SDAM sees it, PRIMARY + 2 SECONDARY in replSetGetStatus, a new
// primary after the primary is killed with SIGKILL, the killed member back as a SECONDARY from the
// config on its disk, and NotWritablePrimary for a write to a secondary. Each member's /metrics
// shows its set: the members' states and lag, the term, the elections it won, its oplog window.
describe('a three-member replica set elects a primary over TCP', () => {
  const nodes: SpawnedNode[] = [];
  const clients: MongoClient[] = [];
  // The driver's default monitoring streams hello (exhaust) from a server that reports a
  // topologyVersion; a reply that broke the stream would fail its heartbeat.
  const streamFailures: string[] = [];
  const connect = (uri: string): MongoClient => {
    const c = new MongoClient(uri, { heartbeatFrequencyMS: 500, serverSelectionTimeoutMS: 20_000 });
    c.on('serverHeartbeatFailed', (e) => {
      if (/moreToCome/.test(e.failure.message)) streamFailures.push(e.failure.message);
    });
    clients.push(c);
    return c;
  };

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const n of nodes) await n.stop();
    for (const n of nodes) removeDir(n.dbpath);
  });

  it('initiates, elects, fails over and refuses writes on a secondary', { timeout: 120_000 }, async () => {
    const httpPorts: number[] = [];
    for (let i = 0; i < 3; i++) {
      httpPorts.push(await freePort());
      nodes.push(await spawnNode({ extraArgs: ['--replSet', 'rs0', '--httpPort', String(httpPorts[i])] }));
    }
    const hosts = nodes.map((n) => `127.0.0.1:${n.port}`);
    const first = connect(nodes[0]!.uri);
    const before = await first.db('admin').command({ hello: 1 });
    assert.equal(before.isWritablePrimary, false);
    assert.equal(before.isreplicaset, true);
    await assert.rejects(first.db('admin').command({ replSetGetStatus: 1 }), (e: MongoServerError) => e.code === 94);
    await first.db('admin').command({
      replSetInitiate: { _id: 'rs0', members: hosts.map((host, _id) => ({ _id, host })), settings: { electionTimeoutMillis: 1000, heartbeatIntervalMillis: 300 } },
    });

    const set = connect(`mongodb://${hosts.join(',')}/?replicaSet=rs0`);
    const primaryHello = await until('a primary', async () => {
      const h = await set.db('admin').command({ hello: 1 });
      return h.isWritablePrimary === true ? h : undefined;
    });
    assert.equal(primaryHello.setName, 'rs0');
    assert.deepEqual([...primaryHello.hosts].sort(), [...hosts].sort());
    assert.ok(primaryHello.topologyVersion.processId !== undefined);
    const primaryHost = primaryHello.me as string;

    const status = await until('PRIMARY and two SECONDARY', async () => {
      const s = await set.db('admin').command({ replSetGetStatus: 1 });
      const states = (s.members as AnyDoc[]).map((m) => m.stateStr).sort();
      return JSON.stringify(states) === JSON.stringify(['PRIMARY', 'SECONDARY', 'SECONDARY']) ? s : undefined;
    });
    assert.equal(status.set, 'rs0');
    assert.ok((status.members as AnyDoc[]).every((m) => m.health === 1));

    const secondaryHost = hosts.find((h) => h !== primaryHost)!;
    const direct = connect(`mongodb://${secondaryHost}/?directConnection=true`);
    await assert.rejects(direct.db('app').collection('c').insertOne({ x: 1 }), (e: MongoServerError) => e.code === 10107 && e.codeName === 'NotWritablePrimary');

    // The secondary learns who is primary from the primary's next heartbeat.
    const secondaryHello = await until('the secondary names the primary', async () => {
      const h = await direct.db('admin').command({ hello: 1 });
      return h.primary !== undefined ? h : undefined;
    });
    assert.equal(secondaryHello.secondary, true);
    assert.equal(secondaryHello.primary, primaryHost);
    const repl = (await direct.db('admin').command({ serverStatus: 1 })).repl as AnyDoc;
    assert.deepEqual([repl.setName, repl.secondary, repl.primary, repl.me, typeof repl.rbid], ['rs0', true, primaryHost, secondaryHost, 'number']);
    const started = Date.now();
    const awaited = await direct.db('admin').command({ hello: 1, topologyVersion: secondaryHello.topologyVersion, maxAwaitTimeMS: 700 });
    assert.ok(Date.now() - started >= 600, 'an awaitable hello on an unchanged topology waits maxAwaitTimeMS');
    assert.equal(String(awaited.topologyVersion.counter), String(secondaryHello.topologyVersion.counter));

    const oldTerm = Number(status.term);
    await nodes[hosts.indexOf(primaryHost)]!.kill9();
    const survivor = connect(`mongodb://${secondaryHost}/?directConnection=true`);
    const after = await until('a new primary', async () => {
      const s = await survivor.db('admin').command({ replSetGetStatus: 1 });
      const primary = (s.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY' && m.health === 1);
      return primary !== undefined && primary.name !== primaryHost ? s : undefined;
    });
    assert.ok(Number(after.term) > oldTerm, `term ${String(after.term)} after ${oldTerm}`);
    const newPrimary = (after.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY').name as string;
    const metricsPort = httpPorts[hosts.indexOf(newPrimary)]!;
    assert.deepEqual(await scrape(metricsPort, 'docshard_replica_set_elections_won_total'), [{ labels: { set: 'rs0' }, value: 1 }]);
    assert.equal((await scrape(metricsPort, 'docshard_replica_set_term'))[0]?.value, Number(after.term));
    const states = Object.fromEntries((await scrape(metricsPort, 'docshard_replica_set_member_state')).map((m) => [m.labels.member, m.labels.state]));
    assert.equal(states[primaryHost], 'DOWN');
    assert.equal(states[newPrimary], 'PRIMARY');
    const lag = await scrape(metricsPort, 'docshard_replication_lag_seconds');
    assert.equal(lag.find((m) => m.labels.member === newPrimary)?.value, 0);
    assert.equal(lag.length, 3);
    const window = await scrape(metricsPort, 'docshard_oplog_window_seconds');
    assert.ok(window.length === 1 && window[0]!.value >= 0);
    // The killed member comes back from its config on disk (local.system.replset) as a SECONDARY.
    const back = await restartNode(nodes[hosts.indexOf(primaryHost)]!, { extraArgs: ['--replSet', 'rs0', '--httpPort', String(httpPorts[hosts.indexOf(primaryHost)])] });
    nodes.push(back);
    const together = await until('the old primary back as a SECONDARY', async () => {
      const s = await survivor.db('admin').command({ replSetGetStatus: 1 });
      const states = (s.members as AnyDoc[]).filter((m) => m.health === 1).map((m) => m.stateStr).sort();
      return JSON.stringify(states) === JSON.stringify(['PRIMARY', 'SECONDARY', 'SECONDARY']) ? s : undefined;
    });
    // The secondaries fetch the primary's oplog, so one catches up and the primary may step down.
    const current = (together.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY').name as string;
    await connect(`mongodb://${current}/?directConnection=true`).db('admin').command({ replSetStepDown: 15, secondaryCatchUpPeriodSecs: 10 });
    assert.deepEqual(streamFailures, []);
  });

  it('a node without --replSet answers as a standalone mongod', async () => {
    const node = await spawnNode();
    nodes.push(node);
    const c = connect(node.uri);
    const hello = await c.db('admin').command({ hello: 1 });
    assert.equal(hello.isWritablePrimary, true);
    assert.equal((await c.db('admin').command({ serverStatus: 1 })).repl, undefined);
    assert.equal(hello.setName, undefined);
    assert.equal(hello.topologyVersion, undefined);
    await assert.rejects(c.db('admin').command({ replSetInitiate: {} }), (e: MongoServerError) => e.code === 76 && e.message === 'This node was not started with replication enabled.');
    await assert.rejects(c.db('admin').command({ replSetGetStatus: 1 }), (e: MongoServerError) => e.code === 76);
    await c.db('app').collection('c').insertOne({ x: 1 });
  });

  it('a config server started with --replSet cfg becomes the primary of its one-member set', async () => {
    const node = await spawnNode({ role: 'config', extraArgs: ['--replSet', 'cfg'] });
    nodes.push(node);
    const c = connect(node.uri);
    await c.db('admin').command({ replSetInitiate: { _id: 'cfg', configsvr: true, members: [{ _id: 0, host: `127.0.0.1:${node.port}` }], settings: { electionTimeoutMillis: 500 } } });
    const hello = await until('the primary', async () => {
      const h = await c.db('admin').command({ hello: 1 });
      return h.isWritablePrimary === true ? h : undefined;
    });
    assert.equal(hello.setName, 'cfg');
    assert.equal(hello.primary, `127.0.0.1:${node.port}`);
    await c.db('app').collection('c').insertOne({ x: 1 });
  });
});


// replSetStepUp, as MongoDB answers it: ok at once on the primary; a secondary stands now, and
// answers once it is primary; one that may not stand (frozen) answers CommandFailed and nothing
// changes. The test helpers start every set with it (spawn_replset.ts), so this suite's set
// already had its first primary elected through it.
describe('replSetStepUp', () => {
  let set: SpawnedReplicaSet;
  let p: SuiteProcesses;
  withProcesses(async (processes) => {
    p = processes;
    set = await p.replicaSet({ members: 3 });
  });
  const direct = (host: string): MongoClient => p.connect(`mongodb://${host}/?directConnection=true`);
  const states = async (): Promise<Map<string, string>> => {
    const status = await direct(set.hosts[0]!).db('admin').command({ replSetGetStatus: 1 });
    return new Map((status.members as AnyDoc[]).map((m) => [String(m.name), String(m.stateStr)]));
  };

  it('is ok on the primary, makes a secondary the primary of a newer term, and refuses a frozen secondary', { timeout: 60_000 }, async () => {
    const primary = [...(await states())].find(([, s]) => s === 'PRIMARY')![0];
    const { term } = await direct(primary).db('admin').command({ replSetGetStatus: 1 });
    await direct(primary).db('admin').command({ replSetStepUp: 1 });
    assert.equal((await states()).get(primary), 'PRIMARY');

    const [next, frozen] = set.hosts.filter((h) => h !== primary);
    await until('a secondary that can stand', async () => ((await direct(next!).db('admin').command({ replSetStepUp: 1 })).ok === 1 ? true : undefined));
    const hello = await direct(next!).db('admin').command({ hello: 1 });
    assert.equal(hello.isWritablePrimary, true);
    assert.ok(Number((await direct(next!).db('admin').command({ replSetGetStatus: 1 })).term) > Number(term));

    await until('the others SECONDARY', async () => ([...(await states())].filter(([, s]) => s === 'SECONDARY').length === 2 ? true : undefined));
    await direct(frozen!).db('admin').command({ replSetFreeze: 60 });
    await assert.rejects(direct(frozen!).db('admin').command({ replSetStepUp: 1 }), (e: MongoServerError) => e.code === 125 && e.codeName === 'CommandFailed');
    assert.equal((await states()).get(next!), 'PRIMARY');
  });
});
