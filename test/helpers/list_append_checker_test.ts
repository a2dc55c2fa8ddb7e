import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '../../src/router/merge/merge_test_support.js';
import { checkListAppend, type Anomaly, type Key, type MicroOp, type Outcome, type Transaction } from './list_append_checker.js';
import { listAppendWorkload } from './list_append_workload.js';

const r = (key: Key, list: number[] | null): MicroOp => ['r', key, list];
const append = (key: Key, value: number): MicroOp => ['append', key, value];
const ok = (...ops: MicroOp[]): Transaction => ({ outcome: 'ok', ops });
const failed = (...ops: MicroOp[]): Transaction => ({ outcome: 'failed', ops });
const info = (...ops: MicroOp[]): Transaction => ({ outcome: 'info', ops });

// Each anomaly as its type and the positions of its transactions, enough to say which it is.
const summary = (anomalies: Anomaly[]): Array<[string, number[]]> => anomalies.map((a) => [a.type, a.txns.map((t) => t.index)]);

test('a serial history has no anomaly', () => {
  const history = [ok(append('x', 1)), ok(r('x', [1]), append('x', 2), r('y', null)), ok(r('x', [1, 2]), r('y', []))];
  assert.deepEqual(checkListAppend(history), []);
});

test('G0: two transactions whose appends to two keys are ordered one way on one key and the other way on the other', () => {
  const history = [ok(append('x', 1), append('y', 2)), ok(append('x', 2), append('y', 1)), ok(r('x', [1, 2]), r('y', [1, 2]))];
  const anomalies = checkListAppend(history);
  assert.deepEqual(summary(anomalies), [['G0', [0, 1]]]);
  assert.deepEqual((anomalies[0] as { steps: unknown }).steps, [
    { from: 0, to: 1, rel: 'ww', key: 'x', value: 1, next: 2 },
    { from: 1, to: 0, rel: 'ww', key: 'y', value: 1, next: 2 },
  ]);
});

test('G1a: a committed read of a value that a failed transaction appended', () => {
  const anomalies = checkListAppend([failed(append('x', 1)), ok(r('x', [1]))]);
  assert.deepEqual(anomalies, [{ type: 'G1a', key: 'x', value: 1, txns: [{ index: 0, ...failed(append('x', 1)) }, { index: 1, ...ok(r('x', [1])) }] }]);
});

test('G1b: a read ending with a value its writer appended another value after', () => {
  assert.deepEqual(summary(checkListAppend([ok(append('x', 1), append('x', 2)), ok(r('x', [1]))])), [['G1b', [0, 1]]]);
});

test('a transaction may read its own intermediate appends', () => {
  assert.deepEqual(checkListAppend([ok(append('x', 1), r('x', [1]), append('x', 2), r('x', [1, 2]))]), []);
});

test('G1c: two transactions each reading what the other appended', () => {
  const anomalies = checkListAppend([ok(append('x', 1), r('y', [1])), ok(append('y', 1), r('x', [1]))]);
  assert.deepEqual(summary(anomalies), [['G1c', [0, 1]]]);
  assert.deepEqual((anomalies[0] as { steps: Array<{ rel: string }> }).steps.map((s) => s.rel), ['wr', 'wr']);
});

test('G-single: a read skew, one key read before a transaction and the other after it', () => {
  const history = [ok(append('x', 1), append('y', 1)), ok(r('x', []), r('y', [1])), ok(r('x', [1]))];
  const anomalies = checkListAppend(history);
  assert.deepEqual(summary(anomalies), [['G-single', [0, 1]]]);
  assert.deepEqual((anomalies[0] as { steps: unknown }).steps, [
    { from: 0, to: 1, rel: 'wr', key: 'y', value: 1, next: null },
    { from: 1, to: 0, rel: 'rw', key: 'x', value: null, next: 1 },
  ]);
});

test('G2-item: a write skew, each transaction appending to the key the other read before it', () => {
  const history = [ok(r('x', []), append('y', 1)), ok(r('y', []), append('x', 1)), ok(r('x', [1]), r('y', [1]))];
  assert.deepEqual(summary(checkListAppend(history)), [['G2-item', [0, 1]]]);
});

test('a cycle readable without anti-dependencies is reported as such only', () => {
  // Transaction 0 both read z before transaction 1 (rw) and appended to x before it (ww): G0 alone.
  const history = [ok(append('x', 1), append('y', 2), r('z', [])), ok(append('x', 2), append('y', 1), append('z', 1)), ok(r('x', [1, 2]), r('y', [1, 2]), r('z', [1]))];
  assert.deepEqual(summary(checkListAppend(history)), [['G0', [0, 1]]]);
});

test('a component with cycles of several kinds reports the shortest of each', () => {
  // 0 and 1 form a G0 on x and y; 2 reads z before 0 appends to it and reads w after 1 appended.
  const history = [
    ok(append('x', 1), append('y', 2), append('z', 1)),
    ok(append('x', 2), append('y', 1), append('w', 1)),
    ok(r('z', []), r('w', [1])),
    ok(r('x', [1, 2]), r('y', [1, 2]), r('z', [1])),
  ];
  assert.deepEqual(summary(checkListAppend(history)), [['G0', [0, 1]], ['G-single', [0, 1, 2]]]);
});

test('a transaction of unknown outcome whose append was read takes part as a writer', () => {
  const history = [info(append('x', 1), append('y', 1)), ok(r('x', []), r('y', [1])), ok(r('x', [1]))];
  assert.deepEqual(summary(checkListAppend(history)), [['G-single', [0, 1]]]);
});

test('the reads of failed and unknown transactions are not evidence', () => {
  const history = [ok(append('x', 1)), failed(r('x', [7, 8])), info(r('x', [2]), append('x', 2)), ok(r('x', [1]))];
  assert.deepEqual(checkListAppend(history), []);
});

test('a read that is not a prefix of the longest read is an incompatible order', () => {
  const history = [ok(append('x', 1)), ok(append('x', 2)), ok(r('x', [1, 2])), ok(r('x', [2, 1]))];
  assert.deepEqual(checkListAppend(history).map((a) => ('read' in a ? [a.type, a.read, a.txns.map((t) => t.index)] : a.type)), [['incompatible-order', [2, 1], [3, 2]]]);
});

test('a read holding a value twice', () => {
  assert.deepEqual(summary(checkListAppend([ok(append('x', 1)), ok(r('x', [1, 1]))])), [['duplicate-elements', [1]]]);
});

test('internal: a transaction that does not read its own appends', () => {
  const anomalies = checkListAppend([ok(r('x', []), append('x', 1), r('x', [])), ok(append('y', 5), r('y', [3]))]);
  assert.deepEqual(
    anomalies.map((a) => (a.type === 'internal' ? [a.key, a.expected, a.whole] : a.type)),
    [['x', [1], true], ['y', [5], false]],
  );
});

test('a value appended twice to one key is refused as a malformed history', () => {
  assert.throws(() => checkListAppend([ok(append('x', 1)), info(append('x', 1))]), /unique values/);
});

// A database that runs transactions one at a time: committed ones apply all their appends, failed
// ones none, and those of unknown outcome either.
function runSerially(transactions: MicroOp[][], random: () => number): Transaction[] {
  const db = new Map<Key, number[]>();
  const history: Transaction[] = [];
  for (const ops of transactions) {
    const roll = random();
    const outcome: Outcome = roll < 0.8 ? 'ok' : roll < 0.9 ? 'failed' : 'info';
    const commits = outcome === 'ok' || (outcome === 'info' && random() < 0.5);
    const view = new Map([...db].map(([k, list]) => [k, [...list]]));
    const done = ops.map((op): MicroOp => {
      if (op[0] === 'append') {
        view.set(op[1], [...(view.get(op[1]) ?? []), op[2]]);
        return op;
      }
      const list = view.get(op[1]);
      return ['r', op[1], outcome !== 'ok' ? null : list === undefined ? null : [...list]];
    });
    if (commits) for (const [k, list] of view) db.set(k, list);
    history.push({ outcome, ops: done });
  }
  history.push({ outcome: 'ok', ops: [...db.keys()].map((k) => r(k, [...db.get(k)!])) });
  return history;
}

test('histories of a serial executor of random transactions have no anomaly (seeded)', () => {
  for (let seed = 1; seed <= 50; seed++) {
    const random = seededRandom(seed);
    const next = listAppendWorkload(random, { activeKeys: 3, maxAppendsPerKey: 20 });
    const history = runSerially(Array.from({ length: 300 }, next), random);
    assert.deepEqual(checkListAppend(history), [], `seed ${seed}`);
  }
});

test('shuffling a serial history keeps it anomaly-free, as the checker needs no order', () => {
  const random = seededRandom(7);
  const history = runSerially(Array.from({ length: 300 }, listAppendWorkload(random)), random);
  const shuffled = history.map((t) => ({ t, k: random() })).sort((a, b) => a.k - b.k).map(({ t }) => t);
  assert.deepEqual(checkListAppend(shuffled), []);
});

test('an executor whose reads lag its writes is caught (seeded)', () => {
  // Each transaction reads the database as it was a few transactions back, with its own appends on
  // top, and appends to the latest: a stale snapshot without write conflicts.
  const kinds = new Set<string>();
  for (let seed = 1; seed <= 20; seed++) {
    const random = seededRandom(seed);
    const next = listAppendWorkload(random, { activeKeys: 3 });
    const states: Array<Map<Key, number[]>> = [new Map()];
    const history: Transaction[] = [];
    for (let i = 0; i < 100; i++) {
      const db = new Map([...states[states.length - 1]!].map(([k, list]) => [k, [...list]]));
      const view = new Map([...states[Math.max(0, states.length - 3)]!].map(([k, list]) => [k, [...list]]));
      const ops = next().map((op): MicroOp => {
        if (op[0] === 'r') return ['r', op[1], [...(view.get(op[1]) ?? [])]];
        for (const m of [db, view]) m.set(op[1], [...(m.get(op[1]) ?? []), op[2]]);
        return op;
      });
      states.push(db);
      history.push(ok(...ops));
    }
    history.push(ok(...[...states[states.length - 1]!].map(([k, list]) => r(k, list))));
    const anomalies = checkListAppend(history);
    assert.notDeepEqual(anomalies, [], `seed ${seed}`);
    for (const a of anomalies) kinds.add(a.type);
  }
  assert.ok(kinds.has('G-single') && kinds.has('G2-item'), [...kinds].join());
});
