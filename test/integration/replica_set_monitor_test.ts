import { freePort } from '../helpers/free_port.js';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId } from 'bson';
import { systemClock } from '../../src/base/clock.js';
import { MongoError } from '../../src/base/errors.js';
import { deserializeDocument, serializeDocument, type Doc } from '../../src/bson/values.js';
import { replicaSetsStats } from '../../src/client/conn_pool_stats.js';
import { openSetAwareNetwork, type SetAwareNetwork } from '../../src/client/set_aware_network.js';
import { WireClient } from '../../src/wire/client.js';
import { OP_MSG_REPLY_PREFIX } from '../../src/wire/message.js';
import { MongoClient } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// Retries once on the errors a set's failover gives, as the router's callers do.
async function retryingOnce<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof MongoError)) throw err;
    return run();
  }
}

async function ok(reply: Promise<Doc>): Promise<Doc> {
  const r = await reply;
  if (r.ok !== 1) throw new MongoError(Number(r.code), String(r.errmsg));
  return r;
}

// An OP_MSG request as the router's fast paths build one: its first OP_MSG_REPLY_PREFIX bytes
// left for the header.
function message(body: Doc): Buffer {
  const doc = serializeDocument(body);
  const out = Buffer.alloc(OP_MSG_REPLY_PREFIX + doc.length);
  doc.copy(out, OP_MSG_REPLY_PREFIX);
  return out;
}

// The router's view of a shard that is a replica set: the process's Network given the set's
// host string, as config.shards.host holds it, with no other help from its caller.
describe('a set-aware network over a three-member replica set', () => {
  let set: SpawnedReplicaSet;
  let network: SetAwareNetwork;
  let setHost: string;
  const direct = new WireClient();
  withProcesses(async (p) => {
    set = await p.replicaSet({ members: 3, electionTimeoutMillis: 2000 });
  });
  before(() => {
    network = openSetAwareNetwork((maxConnectionsPerHost) => new WireClient({ maxConnectionsPerHost }), systemClock);
    setHost = `${set.name}/${set.hosts.join(',')}`;
  });
  after(async () => {
    await network.close();
    await direct.close();
  });

  const primaryOfSet = async (): Promise<string> => until('a primary', async () => {
    for (const host of set.hosts) {
      const hello = await direct.command(host, 'admin', { hello: 1 }, { timeoutMs: 2000 }).catch(() => undefined);
      if (hello?.isWritablePrimary === true && hello.me === host) return host;
    }
    return undefined;
  });

  it('sends commands to the primary by default, and reads with readPreference secondary to a secondary', async () => {
    const primary = await primaryOfSet();
    const hello = await network.command(setHost, 'admin', { hello: 1 });
    assert.equal(hello.me, primary);
    assert.equal(hello.isWritablePrimary, true);
    await ok(network.command(setHost, 'test', { insert: 'c', documents: [{ _id: 1 }], writeConcern: { w: 3 } }));
    for (let i = 0; i < 5; i++) {
      const seen = await network.command(setHost, 'admin', { hello: 1 }, { readPreference: { mode: 'secondary' } });
      assert.equal(seen.secondary, true);
      assert.notEqual(seen.me, primary);
      // The read itself: the secondary takes it because the request names the read preference.
      const found = await ok(network.command(setHost, 'test', { find: 'c', filter: {} }, { readPreference: { mode: 'secondary' } }));
      assert.deepEqual((found.cursor as Doc).firstBatch, [{ _id: 1 }]);
      const raw = deserializeDocument(await network.commandRaw(setHost, 'admin', serializeDocument({ hello: 1, $db: 'admin' }), { readPreference: { mode: 'secondary' } }));
      assert.equal(raw.secondary, true);
      assert.notEqual(raw.me, primary);
      const rawFind = deserializeDocument(await network.commandRaw(setHost, 'test', serializeDocument({ find: 'c', filter: {}, $db: 'test' }), { readPreference: { mode: 'secondary' } }));
      assert.deepEqual((rawFind.cursor as Doc | undefined)?.firstBatch, [{ _id: 1 }], JSON.stringify(rawFind));
    }
    assert.equal(deserializeDocument(await network.commandRaw(setHost, 'admin', serializeDocument({ hello: 1, $db: 'admin' }))).me, primary);
  });

  it('forwards a message to the member its $readPreference selects', async () => {
    const primary = await primaryOfSet();
    const toPrimary = deserializeDocument(await network.forwardMessage(setHost, message({ hello: 1, $db: 'admin' })));
    assert.equal(toPrimary.me, primary);
    const toSecondary = deserializeDocument(await network.forwardMessage(setHost, message({ hello: 1, $db: 'admin', $readPreference: { mode: 'secondary' } })));
    assert.equal(toSecondary.secondary, true);
    assert.notEqual(toSecondary.me, primary);
  });

  it('shows each member\'s state and round trip as connPoolStats\'s replicaSets', async () => {
    const primary = await primaryOfSet();
    const stats = await until('every member known', async () => {
      const s = replicaSetsStats(network.monitors);
      const hosts = ((s[set.name] as Doc | undefined)?.hosts ?? []) as Doc[];
      return hosts.length === 3 && hosts.every((h) => h.ok === true) ? hosts : undefined;
    }, 10_000, 50);
    assert.deepEqual(stats.map((h) => h.addr).sort(), [...set.hosts].sort());
    assert.deepEqual(stats.filter((h) => h.ismaster === true).map((h) => h.addr), [primary]);
    assert.equal(stats.filter((h) => h.secondary === true).length, 2);
    for (const h of stats) assert.equal(typeof h.pingTimeMillis, 'number');
  });

  it('markHostNotPrimary marks the member at once unless its topologyVersion is old news, and the check it starts finds the primary again', async () => {
    const primary = await primaryOfSet();
    const monitor = network.monitors.targeterFor(setHost).monitor;
    await until('the monitor to know the primary', async () => (monitor.selectHost({ mode: 'primary' }) === primary ? true : undefined), 10_000, 50);
    const tv = monitor.view().find((s) => s.address === primary)!.topologyVersion!;
    monitor.markHostNotPrimary(primary, { processId: ObjectId.createFromHexString(tv.processId), counter: Long.fromNumber(tv.counter) });
    assert.equal(monitor.selectHost({ mode: 'primary' }), primary);
    monitor.markHostNotPrimary(primary);
    assert.equal(monitor.selectHost({ mode: 'primary' }), undefined);
    // Nothing changed on the member, so its streaming hello stays held: the check beside it tells.
    assert.equal(await monitor.findHost({ mode: 'primary' }, 3000), primary);
  });

  it('follows a step-down: after one retry, writes reach the new primary', async () => {
    const old = await primaryOfSet();
    // Its connection may close as it steps down; a reply must be a success.
    const down = await direct.command(old, 'admin', { replSetStepDown: 30, secondaryCatchUpPeriodSecs: 10, force: true }).catch(() => ({ ok: 1 }));
    assert.equal(down.ok, 1, JSON.stringify(down));
    const reply = await retryingOnce(() => ok(network.command(setHost, 'test', { insert: 'c', documents: [{ _id: 2 }] })));
    assert.equal(reply.n, 1);
    // On a loaded machine the set may hold an election of its own right after: the primary the
    // network reaches is a writable one, and never the member that stepped down for 30 s.
    const hello = await until('the network at a writable primary', async () => {
      const h = await network.command(setHost, 'admin', { hello: 1 });
      return h.isWritablePrimary === true ? h : undefined;
    }, 15_000);
    assert.notEqual(hello.me, old);
  });

  // A frozen primary keeps its sockets open, so only the request that timed out can tell: it marks
  // the member at once, and the retry waits for the election instead of going back to it.
  it('a request that times out on a frozen primary (SIGSTOP) marks it, and the retry reaches the new primary', async () => {
    const old = await primaryOfSet();
    const frozen = set.nodes[set.hosts.indexOf(old)]!;
    frozen.child.kill('SIGSTOP');
    try {
      await assert.rejects(network.command(setHost, 'test', { insert: 'c', documents: [{ _id: 'frozen' }] }, { timeoutMs: 300 }), (err: unknown) => err instanceof MongoError && err.codeName === 'NetworkTimeout');
      const reply = await ok(network.command(setHost, 'test', { insert: 'c', documents: [{ _id: 'thawed' }] }, { timeoutMs: 12_000 }));
      assert.equal(reply.n, 1);
      assert.notEqual((await network.command(setHost, 'admin', { hello: 1 })).me, old);
    } finally {
      frozen.child.kill('SIGCONT');
    }
    await until('the old primary a secondary again', async () => ((await direct.command(old, 'admin', { hello: 1 }, { timeoutMs: 2000 })).secondary === true ? true : undefined), 30_000, 100);
  });

  it('follows the primary\'s death (kill -9): after one retry, writes reach the new primary', async () => {
    const old = await primaryOfSet();
    await network.command(setHost, 'admin', { hello: 1 });
    await set.nodes[set.hosts.indexOf(old)]!.kill9();
    const reply = await retryingOnce(() => ok(network.command(setHost, 'test', { insert: 'c', documents: [{ _id: 3 }] })));
    assert.equal(reply.n, 1);
    const hello = await network.command(setHost, 'admin', { hello: 1 });
    assert.notEqual(hello.me, old);
  });
});

// A router whose config.shards names a shard by its set's host string reaches the set's primary,
// and shows its monitor's view in connPoolStats.
describe('a router over a shard that is a replica set', () => {
  let set: SpawnedReplicaSet;
  let router: SpawnedRouter;
  let client: MongoClient;
  withProcesses(async (p) => {
    const config = await p.node({ role: 'config' });
    set = await p.replicaSet({ members: 3 });
    const toConfig = p.connect(`mongodb://127.0.0.1:${config.port}/?directConnection=true`);
    await toConfig.db('config').collection('shards').insertOne({ _id: set.name, host: `${set.name}/${set.hosts.join(',')}`, state: 1 } as never);
    httpPort = await freePort();
    router = await p.router(config.port, ['--httpPort', String(httpPort)]);
    client = p.connect(router.uri);
  });
  let httpPort: number;

  it('fans listDatabases out to the set\'s primary, and connPoolStats shows every member', async () => {
    const toPrimary = new MongoClient(set.uri);
    try {
      await toPrimary.db('onset').collection('c').insertOne({ x: 1 });
    } finally {
      await toPrimary.close();
    }
    const list = await client.db('admin').command({ listDatabases: 1 });
    assert.ok((list.databases as Doc[]).some((d) => d.name === 'onset'), JSON.stringify(list));
    const stats = await client.db('admin').command({ connPoolStats: 1 });
    const hosts = ((stats.replicaSets as Doc)[set.name] as Doc).hosts as Doc[];
    assert.deepEqual(hosts.map((h) => h.addr).sort(), [...set.hosts].sort());
    assert.equal(hosts.filter((h) => h.ismaster === true).length, 1);
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    const roles = [...metrics.matchAll(/^docshard_replica_set_monitor_member\{set="rs0",member="([^"]+)",role="(\w+)"\} 1$/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(roles.map(([host]) => host).sort(), [...set.hosts].sort(), metrics.split("\n").filter((l) => l.includes("replica")).join("\n"));
    assert.deepEqual(roles.map(([, role]) => role).sort(), ['primary', 'secondary', 'secondary']);
    assert.equal([...metrics.matchAll(/^docshard_replica_set_monitor_rtt_seconds\{set="rs0",member="[^"]+"\} [\d.e-]+$/gm)].length, 3);
  });
});
