import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../helpers/spawn_replset.js';
import { rmSync } from 'node:fs';
import { Long, MongoClient, type Timestamp } from 'mongodb';
import { removeDir, restartNode, spawnNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';


// A TTL pass every second, so that a secondary's monitor would have run by the time it is checked.
const ARGS = ['--replSet', 'rs0', '--oplogSize', '64', '--setParameter', 'ttlMonitorSleepSecs=1'];

const tsAtLeast = (a: Timestamp, b: Timestamp): boolean => a.greaterThanOrEqual(b);

// Three real `docshard shard --replSet rs0` processes: what the primary writes (inserts, $inc,
// deletes, an index, a transaction, a retryable insertMany) appears on both secondaries, read
// there with secondaryOk; positions flow to the primary and its commit point passes the writes;
// after kill -9 of the primary the new one holds every acknowledged write and answers a retry of a
// retryable write as the first attempt; the TTL monitor deletes on the primary only; the killed
// member restarts from its files and catches up;
// a member whose files are wiped comes back by initial sync with the same documents and indexes;
// a member that cached a session as primary answers a retry right after it is primary again; a
// wiped member resyncs while a transaction is held prepared on the primary.
describe('a three-member replica set replicates', () => {
  const nodes: SpawnedNode[] = [];
  const clients: MongoClient[] = [];
  const connect = (uri: string): MongoClient => {
    const c = new MongoClient(uri, { heartbeatFrequencyMS: 500, serverSelectionTimeoutMS: 20_000 });
    clients.push(c);
    return c;
  };
  const direct = (host: string): MongoClient => connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`);

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const n of nodes) await n.stop();
    for (const n of nodes) removeDir(n.dbpath);
  });

  // What a member holds of the test's collections, sorted, as one comparable value.
  async function contents(host: string): Promise<string> {
    const db = direct(host).db('app');
    const docs = await db.collection('c').find().sort({ _id: 1 }).toArray();
    const txn = await db.collection('t').find().sort({ _id: 1 }).toArray();
    const retried = await db.collection('r').find().sort({ _id: 1 }).toArray();
    const indexes = (await db.collection('c').listIndexes().toArray()).map((i) => i.name as string).sort();
    return JSON.stringify({ docs, txn, retried, indexes });
  }

  it('copies every write to the secondaries, survives the primary\'s kill -9 and resyncs a wiped member', { timeout: 240_000 }, async () => {
    for (let i = 0; i < 3; i++) nodes.push(await spawnNode({ extraArgs: ARGS }));
    const hosts = nodes.map((n) => `127.0.0.1:${n.port}`);
    await connect(nodes[0]!.uri).db('admin').command({
      replSetInitiate: { _id: 'rs0', members: hosts.map((host, _id) => ({ _id, host })), settings: { electionTimeoutMillis: 1500, heartbeatIntervalMillis: 300 } },
    });
    const set = connect(`mongodb://${hosts.join(',')}/?replicaSet=rs0`);
    const primaryHost = await until('a primary', async () => {
      const h = await set.db('admin').command({ hello: 1 });
      return h.isWritablePrimary === true ? (h.me as string) : undefined;
    });
    const secondaries = hosts.filter((h) => h !== primaryHost);
    // --oplogSize sizes each member's local.oplog.rs.
    for (const host of hosts) {
      const [oplog] = await direct(host).db('local').listCollections({ name: 'oplog.rs' }).toArray();
      assert.equal((oplog as AnyDoc).options.size, 64 * 1024 * 1024);
    }

    const app = set.db('app');
    await app.collection<AnyDoc>('c').insertMany([{ _id: 1, n: 0 }, { _id: 2, n: 10 }, { _id: 3, n: 20 }]);
    await app.collection<AnyDoc>('c').updateOne({ _id: 1 }, { $inc: { n: 5 } });
    await app.collection<AnyDoc>('c').deleteOne({ _id: 3 });
    await app.collection<AnyDoc>('c').createIndex({ n: 1 }, { name: 'n_1' });
    const session = set.startSession();
    await session.withTransaction(async () => {
      await app.collection<AnyDoc>('t').insertOne({ _id: 'x' }, { session });
      await app.collection<AnyDoc>('t').insertOne({ _id: 'y' }, { session });
    });
    await app.collection<AnyDoc>('r').insertMany([{ _id: 'a' }, { _id: 'b' }]);
    // A retryable write sent as a raw command: its retry later goes to the new primary.
    const retrySession = set.startSession();
    const retryable = { insert: 'r', documents: [{ _id: 'z' }], txnNumber: Long.fromNumber(7) };
    const firstAttempt = await app.command(retryable, { session: retrySession });
    assert.equal(firstAttempt.n, 1);
    const lastWrite = firstAttempt.operationTime as Timestamp;

    const expected = await contents(primaryHost);
    assert.deepEqual(JSON.parse(expected).docs, [{ _id: 1, n: 5 }, { _id: 2, n: 10 }]);
    for (const host of secondaries) {
      await until(`${host} to hold every write`, async () => ((await contents(host)) === expected ? true : undefined));
    }

    // Positions flow upstream: the primary's commit point passes the last write, and each
    // secondary's own optime reached it.
    await until('the commit point past the writes', async () => {
      const s = await direct(primaryHost).db('admin').command({ replSetGetStatus: 1 });
      return tsAtLeast(s.optimes.lastCommittedOpTime.ts as Timestamp, lastWrite) ? true : undefined;
    });
    for (const host of secondaries) {
      const s = await direct(host).db('admin').command({ replSetGetStatus: 1 });
      const self = (s.members as AnyDoc[]).find((m) => m.self === true);
      assert.ok(tsAtLeast(self.optime.ts as Timestamp, lastWrite), `${host}'s optime reached the last write`);
    }

    // The TTL monitor deletes on the primary only; its deletions reach the secondaries as entries.
    await app.collection<AnyDoc>('expiring').createIndex({ at: 1 }, { expireAfterSeconds: 0 });
    await app.collection<AnyDoc>('expiring').insertOne({ _id: 'old', at: new Date(0) });
    for (const host of secondaries) {
      await until(`${host} to lose the expired document`, async () => ((await direct(host).db('app').collection<AnyDoc>('expiring').countDocuments()) === 0 ? true : undefined));
    }
    const ttlPasses = async (host: string): Promise<number> => Number((await direct(host).db('admin').command({ serverStatus: 1 })).metrics.ttl.passes);
    assert.ok(await ttlPasses(primaryHost) > 0);
    for (const host of secondaries) assert.equal(await ttlPasses(host), 0, `no TTL pass on the secondary ${host}`);

    // kill -9 of the primary: a new one holds everything a majority had.
    const killed = nodes[hosts.indexOf(primaryHost)]!;
    await killed.kill9();
    const newPrimary = await until('a new primary', async () => {
      for (const host of secondaries) {
        const h = await direct(host).db('admin').command({ hello: 1 });
        if (h.isWritablePrimary === true) return host;
      }
      return undefined;
    });
    assert.equal(await contents(newPrimary), expected);
    // The retry of the acknowledged retryable write answers as the first attempt, applied once.
    const retried = await until('the retry on the new primary', async () => app.command(retryable, { session: retrySession }));
    assert.equal(retried.n, 1);
    assert.equal(await direct(newPrimary).db('app').collection<AnyDoc>('r').countDocuments({ _id: 'z' }), 1);

    await app.collection<AnyDoc>('c').insertOne({ _id: 4, n: 40 });
    const afterFailover = await contents(newPrimary);

    // The killed member restarts on its files and catches up.
    const back = await restartNode(killed, { extraArgs: ARGS });
    nodes.push(back);
    await until('the restarted member to catch up', async () => ((await contents(primaryHost)) === afterFailover ? true : undefined), 60_000);

    // A member whose data directory is wiped comes back by initial sync.
    const wipedHost = secondaries.find((h) => h !== newPrimary)!;
    const wiped = nodes[hosts.indexOf(wipedHost)]!;
    await wiped.kill9();
    rmSync(wiped.dbpath, { recursive: true, force: true });
    const resynced = await restartNode(wiped, { extraArgs: ARGS });
    nodes.push(resynced);
    await until('the wiped member to resync', async () => ((await contents(wipedHost)) === afterFailover ? true : undefined), 60_000);
    const status = await direct(wipedHost).db('admin').command({ replSetGetStatus: 1 });
    assert.equal((status.members as AnyDoc[]).find((m) => m.self === true).stateStr, 'SECONDARY');

    // A member that cached a session as primary, then applied the session's next retryable write
    // as a secondary, answers that write's retry as its first attempt once it is primary again.
    const admin = (host: string) => direct(host).db('admin');
    const isPrimary = async (host: string): Promise<true | undefined> => ((await admin(host).command({ hello: 1 })).isWritablePrimary === true ? true : undefined);
    assert.equal((await app.command({ insert: 'r', documents: [{ _id: 's8' }], txnNumber: Long.fromNumber(8) }, { session: retrySession })).n, 1);
    await admin(wipedHost).command({ replSetFreeze: 120 });
    await admin(newPrimary).command({ replSetStepDown: 60, secondaryCatchUpPeriodSecs: 10 });
    await until('the restarted member primary', () => isPrimary(primaryHost));
    const nine = { insert: 'r', documents: [{ _id: 's9' }], txnNumber: Long.fromNumber(9) };
    assert.equal((await until('txnNumber 9 on the next primary', async () => app.command(nine, { session: retrySession }))).n, 1);
    await until(`${newPrimary} to apply txnNumber 9`, async () => ((await direct(newPrimary).db('app').collection<AnyDoc>('r').countDocuments({ _id: 's9' })) === 1 ? true : undefined));
    await admin(newPrimary).command({ replSetFreeze: 0 });
    await admin(primaryHost).command({ replSetStepDown: 60, secondaryCatchUpPeriodSecs: 10 });
    await until('the first new primary primary again', () => isPrimary(newPrimary));
    const again = await until('the retry of txnNumber 9', async () => app.command(nine, { session: retrySession }));
    assert.equal(again.n, 1);
    assert.equal(again.writeErrors, undefined, JSON.stringify(again.writeErrors));
    assert.equal(await direct(newPrimary).db('app').collection<AnyDoc>('r').countDocuments({ _id: 's9' }), 1);
  });
  it('resyncs a wiped member while a transaction is held prepared on the primary, from a secondary or the primary', { timeout: 120_000 }, async () => {
    const hosts = [...new Set(nodes.map((n) => `127.0.0.1:${n.port}`))];
    const live = (host: string): SpawnedNode => nodes.filter((n) => `127.0.0.1:${n.port}` === host).at(-1)!;
    const set = connect(`mongodb://${hosts.join(',')}/?replicaSet=rs0`);
    const primary = await until('a primary', async () => {
      const h = await set.db('admin').command({ hello: 1 });
      return h.isWritablePrimary === true ? (h.me as string) : undefined;
    });
    const onPrimary = connect(`mongodb://${primary}/?directConnection=true`);
    const session = onPrimary.startSession();
    try {
      session.startTransaction();
      await onPrimary.db('app').collection<AnyDoc>('c').updateOne({ _id: 4 }, { $set: { held: true } }, { session });
      await onPrimary.db('admin').command({ prepareTransaction: 1 }, { session });
      // The clone reads each collection as a read at 'available' does, past the prepared
      // transaction, from a secondary as well as from the primary.
      const wipedHost = hosts.find((h) => h !== primary)!;
      const wiped = live(wipedHost);
      await wiped.kill9();
      rmSync(wiped.dbpath, { recursive: true, force: true });
      nodes.push(await restartNode(wiped, { extraArgs: ARGS }));
      await until('the wiped member a secondary again', async () => {
        const status = await direct(wipedHost).db('admin').command({ replSetGetStatus: 1 });
        return status.myState === 2 ? true : undefined;
      }, 45_000);
      assert.equal(await direct(wipedHost).db('app').collection('c').countDocuments({ _id: 4 } as AnyDoc), 1);
    } finally {
      await onPrimary.db('admin').command({ abortTransaction: 1 }, { session }).catch(() => undefined);
      await session.endSession().catch(() => undefined);
    }
  });
});
