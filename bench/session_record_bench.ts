// The session catalog's part of a retryable write, in one process: `npm run bench -- session-record`.
// A storage engine opened as a node opens it (a clock, version history), `bench.docs` with a
// `{k: 1}` index, and rounds of ROUNDS × 1,000 inserts over 8 sessions, each in its own write unit
// and commit, plain and retryable (a new txnNumber each, as the driver sends them). Per write: the
// CPU of the catalog's part (begin, then record and finish; process.cpuUsage around each, so a
// plain write shows what the measuring costs) and of the whole write, commit included. With
// DOCSHARD_BASELINE (another checkout) that checkout's storage engine and catalog run beside this
// one's, rounds alternating: a change to the record's write before and after, in one process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UUID } from 'bson';
import { printTable } from './table.js';

const ROUNDS = Number(process.env.DOCSHARD_ROUNDS ?? 12);
const WRITES = 1000;
const SESSIONS = 8;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// What the benchmark uses of a checkout, loosely typed: the baseline's types may differ.
interface Unit { insertBytes(coll: unknown, bytes: Uint8Array): number }
interface Run { record(stmtId: number, result: { op: 'insert' }, written: { key: Record<string, unknown> }): void; finish(): void }
interface Engine { write<T>(fn: (unit: Unit) => T): T; ensureCollection(ns: string): { coll: unknown }; createIndexes(coll: unknown, specs: object[]): void; close(): Promise<void> }

interface Side { round(retryable: boolean): { catalogUs: number; cpuUs: number }; close(): Promise<void> }

const cpuUs = (from: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(from);
  return d.user + d.system;
};

function doc(i: number): Record<string, unknown> {
  return { _id: i, k: i, name: `user-${i}`, email: `user-${i}@example.com`, score: i * 1.5, tags: ['alpha', 'beta', 'gamma'], note: 'x'.repeat(80) };
}

async function open(root: string): Promise<Side> {
  const load = async (file: string): Promise<Record<string, unknown>> => (await import(path.join(root, 'src', file))) as Record<string, unknown>;
  const { StorageEngine } = await load('storage/storage_engine.ts') as { StorageEngine: { open(dir: string, options: object): Engine } };
  const { equalities } = await load('storage/test_support.ts');
  const { LogicalClock } = await load('sessions/logical_clock.ts') as { LogicalClock: new (now: () => number) => object };
  const { SessionCatalog } = await load('sessions/session_catalog.ts') as { SessionCatalog: new (engine: Engine, clock: object) => { begin(unit: Unit, lsid: unknown, txnNumber: number, ns: string): Run } };
  const { sessionIdOf } = await load('sessions/session_id.ts') as { sessionIdOf(lsid: unknown): unknown };
  const { serializeDocument } = await load('bson/values.ts') as { serializeDocument(doc: object): Buffer };
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-session-record-'));
  const clock = new LogicalClock(Date.now);
  const engine = StorageEngine.open(dir, { compilePartialFilter: equalities, clock, history: { windowMs: 300_000, maxBytes: 256 * 1024 * 1024 } });
  const catalog = new SessionCatalog(engine, clock);
  const { coll } = engine.ensureCollection('bench.docs');
  engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
  const lsids = Array.from({ length: SESSIONS }, () => sessionIdOf({ id: new UUID() }));
  const txnNumbers = new Array<number>(SESSIONS).fill(0);
  let key = 0;
  return {
    round(retryable) {
      let catalogUs = 0;
      const start = process.cpuUsage();
      for (let i = 0; i < WRITES; i++) {
        const s = i % SESSIONS;
        engine.write((unit) => {
          const k = key++;
          const bytes = serializeDocument(doc(k));
          const begun = process.cpuUsage();
          const run = retryable ? catalog.begin(unit, lsids[s], ++txnNumbers[s]!, 'bench.docs') : undefined;
          catalogUs += cpuUs(begun);
          unit.insertBytes(coll, bytes);
          const recording = process.cpuUsage();
          run?.record(0, { op: 'insert' }, { key: { k } });
          run?.finish();
          catalogUs += cpuUs(recording);
        });
      }
      return { catalogUs: catalogUs / WRITES, cpuUs: cpuUs(start) / WRITES };
    },
    async close() {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export async function runSessionRecordBench(): Promise<void> {
  const baseline = process.env.DOCSHARD_BASELINE;
  const sides = [{ name: 'this checkout', side: await open(ROOT) }];
  if (baseline !== undefined) sides.push({ name: 'baseline', side: await open(path.resolve(baseline)) });
  const results = new Map<string, { catalog: number[]; cpu: number[] }>();
  try {
    // Two rounds of warm-up, then rounds in alternating order.
    for (let round = 0; round < ROUNDS + 2; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const { name, side } of order) for (const retryable of [false, true]) {
        const r = side.round(retryable);
        if (round < 2) continue;
        const key = `${name}\t${retryable ? 'retryable' : 'plain'}`;
        const t = results.get(key) ?? { catalog: [], cpu: [] };
        t.catalog.push(r.catalogUs);
        t.cpu.push(r.cpuUs);
        results.set(key, t);
      }
    }
  } finally {
    for (const { side } of sides) await side.close();
  }
  process.stdout.write(`\n## The session catalog's part of a retryable insert, in one process (${ROUNDS} rounds of ${WRITES} writes, medians)\n\n`);
  printTable(['checkout', 'write', 'catalog part, CPU µs/write', 'whole write, CPU µs/write'],
    [...results].map(([key, t]) => [...key.split('\t'), median(t.catalog).toFixed(1), median(t.cpu).toFixed(1)]));
}
