import { MongoClient, type Db } from 'mongodb';
import { cpuSeconds } from './proc_cpu.js';
import { printTable } from './table.js';
import { removeDir, spawnNode, type AnyDoc } from '../test/helpers/spawn_node.js';

// npm run bench -- script (issue 35's row for server-side JavaScript, beside the query suite's):
// what a predicate costs per document read as a script in the node's isolate against the same
// predicate as a query operator, on one node over a collection scan of DOCS documents: $where
// against its operator, $expr's $function against the $expr operator, and a $group's
// $accumulator (whose calls cross in batches) against $sum. Rounds alternate
// between the two forms; each row is the median round's wall time and the node's CPU per
// document, and their ratio.

const DOCS = 20_000;
const BATCH = 2000;
const ROUNDS = 5;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1]!;
}

interface Cost { wallUs: number; cpuUs: number }

async function countOnce(db: Db, pid: number, query: AnyDoc, expected: number): Promise<Cost> {
  const cpu = cpuSeconds(pid);
  const started = performance.now();
  const { n } = await db.command({ count: 'docs', query });
  const wall = performance.now() - started;
  if (n !== expected) throw new Error(`count ${JSON.stringify(query)} answered ${n}, expected ${expected}`);
  return { wallUs: (wall * 1000) / DOCS, cpuUs: ((cpuSeconds(pid) - cpu) * 1e6) / DOCS };
}

// A $group of every document into one group, summing v: the sum is checked.
async function groupOnce(db: Db, pid: number, accumulator: AnyDoc, expected: number): Promise<Cost> {
  const cpu = cpuSeconds(pid);
  const started = performance.now();
  const [group] = await db.collection('docs').aggregate([{ $group: { _id: null, total: accumulator } }]).toArray();
  const wall = performance.now() - started;
  if (Number(group?.total) !== expected) throw new Error(`$group ${JSON.stringify(accumulator)} answered ${String(group?.total)}, expected ${expected}`);
  return { wallUs: (wall * 1000) / DOCS, cpuUs: ((cpuSeconds(pid) - cpu) * 1e6) / DOCS };
}

async function compare(run: (form: AnyDoc) => Promise<Cost>, script: AnyDoc, operator: AnyDoc): Promise<{ script: Cost; operator: Cost }> {
  const scriptRounds: Cost[] = [];
  const operatorRounds: Cost[] = [];
  await run(script);
  await run(operator);
  for (let r = 0; r < ROUNDS; r++) {
    scriptRounds.push(await run(script));
    operatorRounds.push(await run(operator));
  }
  const pick = (rounds: Cost[]): Cost => ({ wallUs: median(rounds.map((c) => c.wallUs)), cpuUs: median(rounds.map((c) => c.cpuUs)) });
  return { script: pick(scriptRounds), operator: pick(operatorRounds) };
}

export async function runScriptBench(): Promise<void> {
  const node = await spawnNode();
  const client = new MongoClient(node.uri);
  try {
    const db = client.db('bench');
    for (let i = 0; i < DOCS; i += BATCH) {
      await db.collection<AnyDoc>('docs').insertMany(Array.from({ length: BATCH }, (_, j) => ({ _id: i + j, v: (i + j) % 1000, name: `user-${i + j}`, tags: ['a', 'b'] })));
    }
    const pid = node.child.pid!;
    const expected = DOCS / 100;
    const count = (query: AnyDoc): Promise<Cost> => countOnce(db, pid, query, expected);
    const where = await compare(count, { $where: 'this.v < 10' }, { v: { $lt: 10 } });
    const fn = await compare(count, { $expr: { $function: { body: 'function(v) { return v < 10; }', args: ['$v'], lang: 'js' } } }, { $expr: { $lt: ['$v', 10] } });
    const total = Array.from({ length: DOCS }, (_, i) => i % 1000).reduce((a, b) => a + b, 0);
    const sum = await compare((acc) => groupOnce(db, pid, acc, total), { $accumulator: {
      init: 'function() { return 0; }', accumulate: 'function(s, v) { return s + v; }', accumulateArgs: ['$v'], merge: 'function(a, b) { return a + b; }', lang: 'js',
    } }, { $sum: '$v' });
    const us = (x: number): string => x.toFixed(2);
    const row = (name: string, c: { script: Cost; operator: Cost }): string[] => [
      name, us(c.script.wallUs), us(c.operator.wallUs), `${(c.script.wallUs / c.operator.wallUs).toFixed(1)}×`, us(c.script.cpuUs), us(c.operator.cpuUs),
    ];
    printTable(
      [`per document, ${DOCS} read`, 'script µs', 'operator µs', 'script ÷ operator', 'script CPU µs', 'operator CPU µs'],
      [row('$where vs {v: {$lt: 10}}', where), row('$expr $function vs $expr $lt', fn), row('$group $accumulator vs $sum', sum)],
    );
  } finally {
    await client.close();
    await node.stop();
    removeDir(node.dbpath);
  }
}
