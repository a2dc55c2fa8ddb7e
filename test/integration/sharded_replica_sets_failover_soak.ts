import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeStream, ChangeStreamDocument, MongoClient, ResumeToken } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import { spawnSetCluster, type SetCluster } from '../helpers/spawn_set_cluster.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';
import { ipOf, NftPartition } from '../helpers/nft_partition.js';
import { checkBank, type Transfer } from '../helpers/bank_checker.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';

// Issue 32's failover under load: a cluster whose config server and two shards are 3-member sets,
// each member on its own loopback address, two routers. Writers (retryable inserts and increments,
// w: 'majority'), bank transfers in transactions across both shards, snapshot reads of the bank
// and a chunk mover run, with the balancer on, while the primary of a shard and then the config
// server's is killed (kill -9, then restarted on its files), stopped (SIGSTOP, then continued) and
// partitioned away (nftables, then healed). Afterwards every acknowledged write is there exactly
// once, the counters are exact, every snapshot of the bank summed to its total and its final
// balances are what its ledger's transfers make them, checkMetadataConsistency finds nothing, and
// no migration is left unfinished. A change stream on the whole cluster, opened through a router
// before the load (issue 33), with a DDL storm beside it (collections created, written and dropped
// without end), shows every committed change exactly once, a transaction's events on each shard
// together, and a
// stream resumed from any of its events' tokens yields exactly what followed it.
//
// Not in npm test (hence not *_test.ts): it still finds faults in some of its runs (a cross-shard
// transfer committed on one shard only, a change event missing after a failover; test/README.md).
// `npm run test:failover` runs it; it takes one to three minutes.

const ELECTION_TIMEOUT_MS = 3000;
const ACCOUNTS = 20;
const INITIAL_BALANCE = 100;
const WRITERS = 3;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// cfg on 127.0.0.11-13, rs0 on .21-23, rs1 on .31-33.
const address = (set: number, member: number): string => `127.0.0.${(set + 1) * 10 + member + 1}`;

interface Load {
  acked: Set<string>;
  unknown: Set<string>;
  increments: { acked: number; unknown: number };
  snapshots: Map<number, number>[];
  // Each snapshot's atClusterTime, for the diagnostics of a bad one.
  snapshotTimes: string[];
  moves: number;
  done: Promise<unknown>;
}

// The load's end once it is told to stop, within 2 minutes: a request that never ends fails the
// run, with what the cluster is running then (the router's own operations, and every member's,
// primaries and secondaries, each asked directly) on stderr.
async function endOfLoad(load: Load, router: MongoClient, members: Map<string, MongoClient>, log: (msg: string) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), 120_000); });
  const outcome = await Promise.race([load.done, late]);
  clearTimeout(timer);
  if (outcome !== 'late') return;
  const local = await router.db('admin').aggregate([{ $currentOp: { allUsers: true, localOps: true } }]).toArray().catch((err: unknown) => [String(err)]);
  log(`the load did not end within 2 minutes of its stop; the router's operations: ${JSON.stringify(local)}`);
  for (const [host, client] of members) {
    const ops = await client.db('admin').command({ currentOp: 1 }).then((r) => r.inprog as unknown[], (err: unknown) => [String(err)]);
    log(`${host}'s operations: ${JSON.stringify(ops)}`);
  }
  throw new Error('the load did not end within 2 minutes of its stop');
}

// Every event of a stream, read until `stop` and then until `until` says the last one read is the
// end; a stream that fails (the driver resumes from what it may) keeps its error.
class Watched {
  readonly events: ChangeStreamDocument[] = [];
  error: unknown;
  private readonly pump: Promise<void>;

  constructor(private readonly stream: ChangeStream, until: (e: ChangeStreamDocument) => boolean) {
    this.pump = (async () => {
      try {
        for (;;) {
          const e = await stream.tryNext();
          if (e === null) continue;
          this.events.push(e);
          if (until(e)) return;
        }
      } catch (err) {
        this.error = err;
      }
    })();
  }

  // The events once the last one came, within `timeoutMs`: a stream that misses it fails the run
  // rather than hangs it.
  async done(timeoutMs = 60_000): Promise<ChangeStreamDocument[]> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), timeoutMs); });
    const outcome = await Promise.race([this.pump, late]);
    clearTimeout(timer);
    await this.stream.close();
    if (outcome === 'late') throw new Error(`the stream did not show the end of the load within ${timeoutMs} ms (${this.events.length} events)`);
    if (this.error !== undefined) throw this.error as Error;
    return this.events;
  }
}

const SENTINEL = 'end of the load';
const isSentinel = (e: ChangeStreamDocument): boolean => e.operationType === 'insert' && e.ns.coll === 'sentinel' && (e.documentKey as { _id: unknown })._id === SENTINEL;
const tokenOf = (e: ChangeStreamDocument): string => String((e._id as { _data: string })._data);

describe('a sharded cluster of replica sets under load loses primaries', () => {
  let p: SuiteProcesses;
  let cluster: SetCluster;
  const partition = new NftPartition('shfail');
  // The members' processes, a restarted one in place of the one killed; and all of them.
  const members = new Map<string, SpawnedNode>();
  const everyMember: SpawnedNode[] = [];

  withProcesses(async (processes) => {
    p = processes;
    partition.heal();
    p.beforeStop(() => {
      partition.heal();
      for (const n of members.values()) n.child.kill('SIGCONT');
      // With DOCSHARD_KEEP_DIRS=1 the directories stay (fixtures.ts), each with its members' logs.
      if (process.env.DOCSHARD_KEEP_DIRS === '1') {
        for (const n of everyMember) appendFileSync(path.join(n.dbpath, 'docshard.log'), n.logs.join('\n'));
        cluster.routers.forEach((r, i) => appendFileSync(path.join(everyMember[0]!.dbpath, `router${i}.log`), r.logs.join('\n')));
      }
    });
    cluster = await spawnSetCluster(p, { shards: 2, members: 3, configMembers: 3, routers: 2, address, electionTimeoutMillis: ELECTION_TIMEOUT_MS });
    for (const set of [cluster.config, ...cluster.shards]) set.nodes.forEach((n, i) => members.set(set.hosts[i]!, n));
    everyMember.push(...members.values());
  });

  const direct = (host: string): MongoClient => p.connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`, { serverSelectionTimeoutMS: 30_000 });

  async function primaryOf(set: SpawnedReplicaSet, not?: string): Promise<string> {
    return until(`a primary of ${set.name}${not === undefined ? '' : ` other than ${not}`}`, async () => {
      for (const host of set.hosts) {
        if (host === not) continue;
        const hello = await direct(host).db('admin').command({ hello: 1 });
        if (hello.isWritablePrimary === true && hello.me === host) return host;
      }
      return undefined;
    }, 90_000, 250);
  }

  async function healthy(set: SpawnedReplicaSet): Promise<void> {
    await until(`every member of ${set.name} PRIMARY or SECONDARY`, async () => {
      for (const host of set.hosts) {
        const status = await direct(host).db('admin').command({ replSetGetStatus: 1 });
        const states = (status.members as AnyDoc[]).map((m) => m.stateStr as string);
        if (states.filter((s) => s === 'PRIMARY').length !== 1 || states.some((s) => s !== 'PRIMARY' && s !== 'SECONDARY')) return undefined;
      }
      return true;
    }, 120_000, 500);
  }

  // The member restarted on its files, address and port after a kill -9.
  async function restart(set: SpawnedReplicaSet, host: string): Promise<void> {
    const old = members.get(host)!;
    const member = set.hosts.indexOf(host);
    const setIndex = [cluster.config, ...cluster.shards].indexOf(set);
    const node = await p.node({
      dbpath: old.dbpath, port: old.port, ...(set === cluster.config ? { role: 'config' as const } : {}),
      extraArgs: ['--replSet', set.name, '--bind_ip', address(setIndex, member)],
    });
    members.set(host, node);
    everyMember.push(node);
  }

  async function faults(set: SpawnedReplicaSet, log: (msg: string) => void): Promise<void> {
    // Where each step fell among the snapshot reads, to place a bad one.
    const killed = await primaryOf(set);
    await members.get(killed)!.kill9();
    log(`${set.name}: killed ${killed}, new primary ${await primaryOf(set, killed)}`);
    await restart(set, killed);
    await healthy(set);

    const stopped = await primaryOf(set);
    members.get(stopped)!.child.kill('SIGSTOP');
    log(`${set.name}: stopped ${stopped}, new primary ${await primaryOf(set, stopped)}`);
    await sleep(2000);
    members.get(stopped)!.child.kill('SIGCONT');
    await healthy(set);

    const isolated = await primaryOf(set);
    partition.cut(ipOf(isolated), set.hosts.filter((h) => h !== isolated).map(ipOf));
    try {
      log(`${set.name}: partitioned ${isolated} away, new primary ${await primaryOf(set, isolated)}`);
      await sleep(2000);
    } finally {
      partition.heal();
    }
    await healthy(set);
  }

  function startLoad(routers: MongoClient[], stop: { now: boolean }): Load {
    const load: Load = { acked: new Set(), unknown: new Set(), increments: { acked: 0, unknown: 0 }, snapshots: [], snapshotTimes: [], moves: 0, done: Promise.resolve() };
    const router = (i: number): MongoClient => routers[i % routers.length]!;
    const loop = async (body: (i: number) => Promise<void>): Promise<void> => {
      for (let i = 0; !stop.now; i++) {
        await body(i);
        await sleep(20);
      }
    };
    const writer = (w: number) => loop(async (seq) => {
      const id = `${w}-${seq}`;
      try {
        await router(seq + w).db('app').collection<AnyDoc>('log').insertOne({ _id: id, w, seq: seq * WRITERS + w }, { writeConcern: { w: 'majority' } });
        load.acked.add(id);
      } catch {
        load.unknown.add(id);
      }
    });
    const incrementer = loop(async (i) => {
      try {
        await router(i).db('app').collection<AnyDoc>('counters').updateOne({ _id: 'c' }, { $inc: { n: 1 }, $set: { last: i } }, { writeConcern: { w: 'majority' } });
        load.increments.acked += 1;
      } catch {
        load.increments.unknown += 1;
      }
    });
    const transfers = (t: number) => loop(async (i) => {
      const session = router(i + t).startSession();
      try {
        const from = (i * 7 + t) % ACCOUNTS;
        const to = (from + 1 + ((i + t) % (ACCOUNTS - 1))) % ACCOUNTS;
        session.startTransaction({ readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' } });
        const bank = router(i + t).db('bank');
        await bank.collection<AnyDoc>('accounts').updateOne({ _id: from }, { $inc: { balance: -1 } }, { session });
        await bank.collection<AnyDoc>('accounts').updateOne({ _id: to }, { $inc: { balance: 1 } }, { session });
        await bank.collection<AnyDoc>('ledger').insertOne({ _id: `${t}-${i}`, from, to, amount: 1 }, { session });
        await session.commitTransaction();
      } catch {
        await session.abortTransaction().catch(() => undefined);
      } finally {
        await session.endSession().catch(() => undefined);
      }
    });
    const reader = loop(async (i) => {
      try {
        const reply = await router(i).db('bank').command({ find: 'accounts', filter: {}, batchSize: ACCOUNTS + 1, readConcern: { level: 'snapshot' } });
        const docs = reply.cursor.firstBatch as AnyDoc[];
        load.snapshots.push(new Map(docs.map((d) => [Number(d._id), Number(d.balance)])));
        load.snapshotTimes.push(String(reply.cursor.atClusterTime));
      } catch {
        // a read the failover interrupted says nothing of the bank
      }
    });
    const mover = loop(async (i) => {
      try {
        const [ns, min] = i % 2 === 0 ? ['app.log', { seq: (i % 8) * 50 }] : ['bank.accounts', { _id: 10 }];
        const [chunk] = await router(i).db('config').collection<AnyDoc>('chunks').find({ min }).toArray();
        const to = chunk?.shard === 'rs0' ? 'rs1' : 'rs0';
        await router(i).db('admin').command({ moveRange: ns, min, toShard: to });
        load.moves += 1;
      } catch {
        // refused or interrupted by the failover
      }
    });
    const ddl = loop(async (i) => {
      const db = router(i).db('ddl');
      try {
        await db.createCollection(`c${i % 4}`);
        await db.collection<AnyDoc>(`c${i % 4}`).insertOne({ _id: i });
        await db.collection(`c${i % 4}`).drop();
      } catch {
        // interrupted by the failover, or the collection left from an interrupted round
      }
    });
    load.done = Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), incrementer, transfers(0), transfers(1), reader, mover, ddl]);
    return load;
  }

  it('keeps every acknowledged write once, the bank whole in every snapshot, and no migration unfinished', { timeout: 420_000 }, async (t) => {
    let load: Load | undefined;
    // On stderr at once too: a run that hangs shows how far it got.
    const log = (msg: string): void => {
      const line = `[${new Date().toISOString()}, snapshot ${load?.snapshots.length ?? 0}] ${msg}`;
      t.diagnostic(line);
      process.stderr.write(`${line}\n`);
    };
    const routers = cluster.routers.map((r) => p.connect(r.uri, { serverSelectionTimeoutMS: 60_000 }));
    const admin = routers[0]!.db('admin');
    await admin.command({ enableSharding: 'app', primaryShard: 'rs0' });
    await admin.command({ enableSharding: 'bank', primaryShard: 'rs0' });
    await admin.command({ shardCollection: 'app.log', key: { seq: 1 } });
    for (let seq = 50; seq < 400; seq += 50) await admin.command({ split: 'app.log', middle: { seq } });
    await admin.command({ shardCollection: 'bank.accounts', key: { _id: 1 } });
    await admin.command({ split: 'bank.accounts', middle: { _id: 10 } });
    await routers[0]!.db('bank').collection<AnyDoc>('accounts').insertMany(Array.from({ length: ACCOUNTS }, (_, i) => ({ _id: i, balance: INITIAL_BALANCE })), { writeConcern: { w: 'majority' } });
    await routers[0]!.db('bank').createCollection('ledger');
    await routers[0]!.db('app').collection<AnyDoc>('counters').insertOne({ _id: 'c', n: 0 }, { writeConcern: { w: 'majority' } });
    await admin.command({ moveRange: 'bank.accounts', min: { _id: 10 }, toShard: 'rs1', _waitForDelete: true });
    await admin.command({ moveRange: 'app.log', min: { seq: 200 }, max: { seq: 250 }, toShard: 'rs1' });
    await admin.command({ balancerStart: 1 });

    // Opened before the load (a stream's aggregate leaves with its first read), through the
    // client that wrote the setup: its cluster time, gossiped to the router, puts the stream's
    // start after those writes.
    const stream = routers[0]!.watch();
    assert.equal(await stream.tryNext(), null);
    const watched = new Watched(stream, isSentinel);
    const stop = { now: false };
    const running = startLoad(routers, stop);
    load = running;
    try {
      await sleep(3000);
      await faults(cluster.shards[0]!, log);
      await faults(cluster.config, log);
      await sleep(3000);
    } finally {
      stop.now = true;
      await endOfLoad(running, routers[0]!, new Map([...members.keys()].map((host) => [host, direct(host)])), log);
    }
    await admin.command({ balancerStop: 1 });
    for (const set of [cluster.config, ...cluster.shards]) await healthy(set);
    log(`${running.acked.size} inserts acknowledged, ${running.unknown.size} unknown; ${running.increments.acked} increments acknowledged, ${running.increments.unknown} unknown; ${running.snapshots.length} snapshots; ${running.moves} moves`);

    const ids = (await routers[1]!.db('app').collection<AnyDoc>('log').find({}, { readConcern: { level: 'majority' }, projection: { _id: 1 } }).toArray()).map((d) => String(d._id));
    assert.equal(new Set(ids).size, ids.length, 'no document twice');
    const lost = [...running.acked].filter((id) => !ids.includes(id));
    assert.deepEqual(lost, [], 'every acknowledged insert is there');
    assert.deepEqual(ids.filter((id) => !running.acked.has(id) && !running.unknown.has(id)), [], 'nothing no writer sent');

    const counter = await routers[1]!.db('app').collection<AnyDoc>('counters').findOne({ _id: 'c' }, { readConcern: { level: 'majority' } });
    assert.ok(counter!.n >= running.increments.acked && counter!.n <= running.increments.acked + running.increments.unknown, `counter ${counter!.n} within [${running.increments.acked}, ${running.increments.acked + running.increments.unknown}]`);

    const transfers: Transfer[] = (await routers[1]!.db('bank').collection<AnyDoc>('ledger').find({}, { readConcern: { level: 'majority' } }).toArray()).map((d) => ({ from: Number(d.from), to: Number(d.to), amount: Number(d.amount) }));
    const final = new Map((await routers[1]!.db('bank').collection<AnyDoc>('accounts').find({}, { readConcern: { level: 'majority' } }).toArray()).map((d) => [Number(d._id), Number(d.balance)]));
    const initial = new Map(Array.from({ length: ACCOUNTS }, (_, i) => [i, INITIAL_BALANCE]));
    const report = checkBank(initial, transfers, running.snapshots, final);
    if (report.badReads.length > 0 || report.badFinal.length > 0) {
      log(`bad snapshots ${JSON.stringify(report.badReads.map((r) => [r.index, r.total, running.snapshotTimes[r.index]]))}; bad final ${JSON.stringify(report.badFinal)}`);
      const first = report.badReads[0];
      if (first !== undefined && first.index > 0) {
        const before = running.snapshots[first.index - 1]!;
        log(`first bad snapshot against the one before (${running.snapshotTimes[first.index - 1]}): ${JSON.stringify([...first.read].filter(([a, b]) => before.get(Number(a)) !== b).map(([a, b]) => [a, before.get(Number(a)), b]))}`);
      }
    }
    assert.deepEqual(report.badReads.map((r) => ({ index: r.index, total: r.total, missing: r.missing })), [], 'every snapshot sums to the total');
    assert.deepEqual(report.badFinal, [], 'the final balances are the ledger\'s');
    log(`${transfers.length} transfers committed`);

    await routers[0]!.db('app').collection<AnyDoc>('sentinel').insertOne({ _id: SENTINEL }, { writeConcern: { w: 'majority' } });
    const events = await watched.done();
    const inserted = events.filter((e) => e.operationType === 'insert' && e.ns.db === 'app' && e.ns.coll === 'log').map((e) => String((e as { documentKey: { _id: unknown } }).documentKey._id));
    const twice = inserted.filter((id, i) => inserted.indexOf(id) !== i);
    const unseen = ids.filter((id) => !inserted.includes(id));
    if (twice.length > 0 || unseen.length > 0) {
      const at = (id: string): string => JSON.stringify(events.flatMap((e, i) => (e.operationType === 'insert' && String((e as { documentKey: { _id: unknown } }).documentKey._id) === id ? [[i, String((e as { clusterTime?: unknown }).clusterTime)]] : [])));
      log(`inserts twice in the stream: ${twice.map((id) => `${id} at ${at(id)}`).join(', ')}; never: ${unseen.join(', ')}`);
    }
    assert.deepEqual([...inserted].sort(), [...ids].sort(), 'each document of app.log inserted once in the stream');
    const increments = events.filter((e) => e.operationType === 'update' && e.ns.coll === 'counters');
    if (increments.length !== counter!.n) {
      const seen = increments.map((e) => Number((e as { updateDescription: { updatedFields: { last?: unknown } } }).updateDescription.updatedFields.last));
      const missing = Array.from({ length: seen.length + 2 }, (_, i) => i).filter((i) => !seen.includes(i));
      log(`increments in the stream: ${JSON.stringify(seen)}; clusterTimes ${JSON.stringify(increments.map((e) => String((e as { clusterTime?: unknown }).clusterTime)))}; missing ${JSON.stringify(missing)}`);
    }
    assert.equal(increments.length, counter!.n, 'each increment once in the stream');
    const ledgerEvents = events.filter((e) => e.operationType === 'insert' && e.ns.coll === 'ledger');
    const ledgerIds = (await routers[1]!.db('bank').collection<AnyDoc>('ledger').find({}, { readConcern: { level: 'majority' }, projection: { _id: 1 } }).toArray()).map((d) => String(d._id));
    if (ledgerEvents.length !== ledgerIds.length) {
      const streamed = ledgerEvents.map((e) => String((e as { documentKey: { _id: unknown } }).documentKey._id));
      const never = ledgerIds.filter((id) => !streamed.includes(id));
      const near = (id: string): string => {
        const [t, n] = id.split('-');
        const neighbours = ledgerEvents.filter((e) => { const [et, en] = String((e as { documentKey: { _id: unknown } }).documentKey._id).split('-'); return et === t && Math.abs(Number(en) - Number(n)) <= 1; });
        return JSON.stringify(neighbours.map((e) => [String((e as { documentKey: { _id: unknown } }).documentKey._id), String((e as { clusterTime?: unknown }).clusterTime)]));
      };
      log(`ledger entries never in the stream: ${never.map((id) => `${id} (its writer's neighbours ${near(id)})`).join(', ')}; twice: ${streamed.filter((id, i) => streamed.indexOf(id) !== i).join(', ')}`);
    }
    assert.equal(ledgerEvents.length, transfers.length, 'each committed transfer once in the stream');
    const transactions = new Map<string, number[]>();
    events.forEach((e, i) => {
      const { lsid, txnNumber } = e as { lsid?: { id: { toString(encoding: string): string } }; txnNumber?: unknown };
      if (lsid === undefined || txnNumber === undefined) return;
      // A transaction's events on one shard share its commit's time there; each shard's commit
      // has its own, and mongos merges them apart as docshard's router does.
      const key = `${lsid.id.toString('hex')}:${String(txnNumber)}@${String((e as { clusterTime?: unknown }).clusterTime)}`;
      transactions.set(key, [...(transactions.get(key) ?? []), i]);
    });
    // Another shard's event of the very same cluster time may sort between them (by txnOpIndex, as
    // in mongos's merge); an event of any other time may not.
    const timeOf = (e: ChangeStreamDocument): string => String((e as { clusterTime?: unknown }).clusterTime);
    const scattered = [...transactions].filter(([, at]) => events.slice(at[0]!, at[at.length - 1]! + 1).some((e) => timeOf(e) !== timeOf(events[at[0]!]!)));
    if (scattered.length > 0) {
      const [, at] = scattered[0]!;
      const show = (e: ChangeStreamDocument): string => {
        const { lsid, txnNumber, clusterTime, ns, documentKey } = e as { lsid?: { id: { toString(encoding: string): string } }; txnNumber?: unknown; clusterTime?: unknown; ns?: { db: string; coll: string }; documentKey?: unknown };
        return `${e.operationType} ${ns?.db}.${ns?.coll} ${JSON.stringify(documentKey)} ${String(clusterTime)} ${lsid === undefined ? '' : `${lsid.id.toString('hex')}:${String(txnNumber)}`}`;
      };
      log(`scattered transaction: ${events.slice(at[0]!, at[at.length - 1]! + 1).map(show).join(' | ')}`);
    }
    assert.deepEqual(scattered, [], 'a transaction\'s events on a shard together');
    assert.ok(transactions.size >= transfers.length, `${transactions.size} transactions' events for ${transfers.length} transfers`);
    for (const from of [Math.floor(events.length / 4), Math.floor(events.length / 2), events.length - 2]) {
      const resumed = await new Watched(routers[from % 2]!.watch([], { resumeAfter: events[from]!._id as ResumeToken }), isSentinel).done();
      assert.deepEqual(resumed.map(tokenOf), events.slice(from + 1).map(tokenOf), `resumed after event ${from} of ${events.length}`);
    }
    log(`${events.length} events in the stream; ${transactions.size} transactions`);

    const inconsistencies = await admin.command({ checkMetadataConsistency: 1 });
    assert.deepEqual(inconsistencies.cursor.firstBatch, []);
    for (const set of cluster.shards) {
      const primary = direct(await primaryOf(set));
      await until(`${set.name}'s migrations finished`, async () => (await primary.db('config').collection('migrationCoordinators').countDocuments()) === 0 ? true : undefined, 60_000, 500);
    }
  });
});
