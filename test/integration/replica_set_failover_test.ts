import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import { restartNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));


const WRITERS = 8;

// 8 clients inserting {w, seq} and incrementing their counter, each write w: 'majority' and
// retryable (the driver's defaults against a set), until stopped; what was acknowledged and what
// failed with an outcome the client never learned.
function writeLoad(client: MongoClient): { ackedInserts: Set<string>; ackedIncrements: number[]; uncertainIncrements: number[]; stop: () => Promise<void> } {
  const db = client.db('load');
  const ackedInserts = new Set<string>();
  const ackedIncrements = new Array<number>(WRITERS).fill(0);
  const uncertainIncrements = new Array<number>(WRITERS).fill(0);
  let stopping = false;
  const base = Date.now();
  const workers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let seq = 0; !stopping; seq++) {
      try {
        await db.collection('events').insertOne({ w, seq, run: base });
        ackedInserts.add(`${w}:${seq}:${base}`);
      } catch {
        // Its outcome is unknown to the client: present at most once.
      }
      try {
        await db.collection('counters').updateOne({ _id: w } as AnyDoc, { $inc: { n: 1 } }, { upsert: true });
        ackedIncrements[w]! += 1;
      } catch {
        uncertainIncrements[w]! += 1;
      }
    }
  });
  return { ackedInserts, ackedIncrements, uncertainIncrements, stop: async () => { stopping = true; await Promise.all(workers); } };
}

// Issue 31's failover under load: 8 clients write with w: 'majority' and retryable writes (the
// driver's defaults against a set) while the primary is killed with SIGKILL, at the default
// election timeout. A new primary is elected within 12 s; afterwards every member holds every
// acknowledged write exactly once, and a write whose outcome the client never learned at most once.
describe('a three-member replica set under write load loses the primary', () => {
  let set: SpawnedReplicaSet;
  const restarted: SpawnedNode[] = [];
  const clients: MongoClient[] = [];
  withProcesses(async (p) => {
    set = await p.replicaSet({ members: 3 });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const n of restarted) await n.stop();
  });
  // What earlier tests of the suite acknowledged (and could not know) stays on every member.
  const previous = { inserts: new Set<string>(), increments: new Array<number>(WRITERS).fill(0), uncertain: new Array<number>(WRITERS).fill(0) };

  const holdsEveryAcknowledgedWriteOnce = async (load: ReturnType<typeof writeLoad>, before: typeof previous): Promise<void> => {
    for (const host of set.hosts) {
      const member = connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`);
      const events = await member.db('load').collection<AnyDoc>('events').find({}, { projection: { _id: 0, w: 1, seq: 1, run: 1 } }).toArray();
      const seen = new Map<string, number>();
      for (const e of events) seen.set(`${e.w}:${e.seq}:${e.run}`, (seen.get(`${e.w}:${e.seq}:${e.run}`) ?? 0) + 1);
      const missing = [...before.inserts, ...load.ackedInserts].filter((k) => !seen.has(k));
      const doubled = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
      assert.deepEqual(missing, [], `${host} lacks acknowledged inserts`);
      assert.deepEqual(doubled, [], `${host} holds inserts twice`);
      const counters = await member.db('load').collection<AnyDoc>('counters').find({}).toArray();
      for (let w = 0; w < WRITERS; w++) {
        const n = Number(counters.find((c) => c._id === w)?.n ?? 0);
        const acked = before.increments[w]! + load.ackedIncrements[w]!;
        const uncertain = before.uncertain[w]! + load.uncertainIncrements[w]!;
        assert.ok(n >= acked && n <= acked + uncertain, `${host}: counter ${w} is ${n}, acknowledged ${acked}, uncertain ${uncertain}`);
      }
    }
  };

  // Every member up, PRIMARY or SECONDARY, at the same optime.
  const converged = (via: MongoClient): Promise<true> => until('every member at the same optime', async () => {
    const status = await via.db('admin').command({ replSetGetStatus: 1 });
    const members = status.members as AnyDoc[];
    if (members.some((m) => m.health !== 1 || (m.stateStr !== 'PRIMARY' && m.stateStr !== 'SECONDARY'))) return undefined;
    return new Set(members.map((m) => JSON.stringify(m.optime))).size === 1 ? true : undefined;
  }, 90_000);

  const connect = (uri: string): MongoClient => {
    const c = new MongoClient(uri, { serverSelectionTimeoutMS: 30_000, heartbeatFrequencyMS: 500 });
    clients.push(c);
    return c;
  };

  it('elects a new primary within 12 s, and every member ends holding each acknowledged write once', { timeout: 240_000 }, async (t) => {
    const client = connect(set.uri);
    const load = writeLoad(client);
    const { ackedInserts } = load;
    await until('writes under way', async () => (ackedInserts.size >= 200 ? true : undefined));
    const hello = await client.db('admin').command({ hello: 1 });
    const primaryHost = String(hello.primary);
    const primary = set.nodes[set.hosts.indexOf(primaryHost)]!;
    const killedAt = Date.now();
    await primary.kill9();
    const survivor = connect(`mongodb://${set.hosts.find((h) => h !== primaryHost)}/?directConnection=true`);
    const newPrimary = await until('a new primary', async () => {
      const status = await survivor.db('admin').command({ replSetGetStatus: 1 });
      const p = (status.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY' && m.health === 1);
      return p !== undefined && p.name !== primaryHost ? String(p.name) : undefined;
    }, 30_000, 50);
    const electedAfterMs = Date.now() - killedAt;
    const acknowledgedBefore = ackedInserts.size;
    await until('writes acknowledged by the new primary', async () => (ackedInserts.size >= acknowledgedBefore + 200 ? true : undefined));
    await load.stop();
    t.diagnostic(`new primary after ${electedAfterMs} ms; ${ackedInserts.size} inserts acknowledged`);
    assert.ok(electedAfterMs <= 12_000, `the new primary ${newPrimary} took ${electedAfterMs} ms`);

    // The old primary comes back from its files; whatever it wrote that no majority held is undone
    // (by rollback or, its history gone with the process, by syncing again), and it catches up.
    const back = await restartNode(primary, { extraArgs: ['--replSet', set.name] });
    restarted.push(back);
    set.nodes[set.nodes.indexOf(primary)] = back;
    await converged(survivor);

    await holdsEveryAcknowledgedWriteOnce(load, previous);
    previous.inserts = new Set([...previous.inserts, ...load.ackedInserts]);
    load.ackedIncrements.forEach((n, w) => { previous.increments[w]! += n; previous.uncertain[w]! += load.uncertainIncrements[w]!; });
  });

  it('a primary stopped (SIGSTOP) for 30 s is replaced, and once continued steps down and undoes what no majority held', { timeout: 240_000 }, async (t) => {
    const client = connect(set.uri);
    const load = writeLoad(client);
    await until('writes under way', async () => (load.ackedInserts.size >= 200 ? true : undefined));
    const primaryHost = String((await client.db('admin').command({ hello: 1 })).primary);
    const primary = set.nodes[set.hosts.indexOf(primaryHost)]!;
    const stoppedAt = Date.now();
    primary.child.kill('SIGSTOP');
    const survivor = connect(`mongodb://${set.hosts.find((h) => h !== primaryHost)}/?directConnection=true`);
    try {
      await until('a new primary', async () => {
        const status = await survivor.db('admin').command({ replSetGetStatus: 1 });
        const p = (status.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY' && m.health === 1);
        return p !== undefined && p.name !== primaryHost ? true : undefined;
      }, 30_000, 50);
      const electedAfterMs = Date.now() - stoppedAt;
      t.diagnostic(`new primary after ${electedAfterMs} ms`);
      assert.ok(electedAfterMs <= 12_000, `the new primary took ${electedAfterMs} ms`);
      await sleep(Math.max(0, 30_000 - (Date.now() - stoppedAt)));
    } finally {
      primary.child.kill('SIGCONT');
    }
    await until('the old primary a secondary', async () => {
      const h = await connect(`mongodb://${primaryHost}/?directConnection=true`).db('admin').command({ hello: 1 });
      return h.secondary === true ? true : undefined;
    }, 60_000);
    await load.stop();
    await converged(survivor);
    await holdsEveryAcknowledgedWriteOnce(load, previous);
  });
});
