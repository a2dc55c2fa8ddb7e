import assert from 'node:assert/strict';
import type { MongoClient } from 'mongodb';
import type { AnyDoc } from './spawn_node.js';

// Clients inserting {w, seq, run} into load.events and incrementing their counter in
// load.counters, each write with the client's write concern (w: 'majority' and retryable, the
// driver's defaults against a set), until stopped: what was acknowledged, and the increments
// that failed with an outcome the client never learned.
export interface WriteLoad {
  readonly writers: number;
  readonly ackedInserts: Set<string>;
  readonly ackedIncrements: number[];
  readonly uncertainIncrements: number[];
  stop(): Promise<void>;
}

const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

export function writeLoad(client: MongoClient, writers: number): WriteLoad {
  const db = client.db('load');
  const ackedInserts = new Set<string>();
  const ackedIncrements = new Array<number>(writers).fill(0);
  const uncertainIncrements = new Array<number>(writers).fill(0);
  let stopping = false;
  const base = Date.now();
  const workers = Array.from({ length: writers }, async (_, w) => {
    for (let seq = 0; !stopping; seq++) {
      try {
        await db.collection('events').insertOne({ w, seq, run: base });
        ackedInserts.add(`${w}:${seq}:${base}`);
      } catch {
        // Its outcome is unknown to the client: present at most once. A refusal that comes
        // without any I/O (a closed client) must not starve the event loop.
        await pause();
      }
      try {
        await db.collection('counters').updateOne({ _id: w } as AnyDoc, { $inc: { n: 1 } }, { upsert: true });
        ackedIncrements[w]! += 1;
      } catch {
        uncertainIncrements[w]! += 1;
        await pause();
      }
    }
  });
  return { writers, ackedInserts, ackedIncrements, uncertainIncrements, stop: async () => { stopping = true; await Promise.all(workers); } };
}

// Every acknowledged insert of the loads (run one after another on the same collections) is on
// `member` once and no insert twice; each counter is at least its acknowledged increments and at
// most those and the uncertain ones.
export async function holdsEveryAcknowledgedWriteOnce(member: MongoClient, name: string, loads: readonly WriteLoad[]): Promise<void> {
  const events = await member.db('load').collection<AnyDoc>('events').find({}, { projection: { _id: 0, w: 1, seq: 1, run: 1 } }).toArray();
  const seen = new Map<string, number>();
  for (const e of events) seen.set(`${e.w}:${e.seq}:${e.run}`, (seen.get(`${e.w}:${e.seq}:${e.run}`) ?? 0) + 1);
  const missing = loads.flatMap((l) => [...l.ackedInserts]).filter((k) => !seen.has(k));
  const doubled = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
  assert.deepEqual(missing, [], `${name} lacks acknowledged inserts`);
  assert.deepEqual(doubled, [], `${name} holds inserts twice`);
  const counters = await member.db('load').collection<AnyDoc>('counters').find({}).toArray();
  const writers = Math.max(0, ...loads.map((l) => l.writers));
  for (let w = 0; w < writers; w++) {
    const n = Number(counters.find((c) => c._id === w)?.n ?? 0);
    const acked = loads.reduce((sum, l) => sum + (l.ackedIncrements[w] ?? 0), 0);
    const uncertain = loads.reduce((sum, l) => sum + (l.uncertainIncrements[w] ?? 0), 0);
    assert.ok(n >= acked && n <= acked + uncertain, `${name}: counter ${w} is ${n}, acknowledged ${acked}, uncertain ${uncertain}`);
  }
}
