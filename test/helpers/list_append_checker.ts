import { DependencyGraph, type CycleKind, type Rel } from './dependency_cycles.js';

// A checker for list-append histories in the manner of Jepsen's Elle (Kingsbury & Alvaro, "Elle:
// Inferring Isolation Anomalies from Experimental Observations"). Appending to a list leaves every
// earlier version inside every later one, so the longest read of a key gives its version order,
// and from that order the write-write, write-read and read-write dependencies between
// transactions follow without knowing when anything ran.

export type Key = string | number;

// A read's list is null when the transaction did not learn it (failed or unknown outcome); in a
// committed transaction null means the key did not exist, as the empty list does.
export type MicroOp = readonly ['r', Key, readonly number[] | null] | readonly ['append', Key, number];

// ok: committed; failed: certainly not committed; info: unknown (a commit whose reply was lost).
export type Outcome = 'ok' | 'failed' | 'info';

export interface Transaction {
  readonly outcome: Outcome;
  readonly ops: readonly MicroOp[];
}

// A transaction of the history with its position there, which is how anomalies name it.
export interface HistoryTxn extends Transaction {
  readonly index: number;
}

// One edge of a cycle. ww: `from` appended `value` to `key` and `to` appended `next` right after
// it; wr: `to` read `key` ending with `from`'s `value`; rw: `from` read `key` ending with `value`
// (null: empty) and `to` appended `next`, the value right after it.
export interface CycleStep {
  from: number;
  to: number;
  rel: Rel;
  key: Key;
  value: number | null;
  next: number | null;
}

export type Anomaly =
  // A committed read saw a value that a failed transaction appended (txns: writer, reader).
  | { type: 'G1a'; key: Key; value: number; txns: HistoryTxn[] }
  // A committed read ended with a value its writer followed by another append to the key.
  | { type: 'G1b'; key: Key; value: number; txns: HistoryTxn[] }
  // A read that is not a prefix of the key's longest read (txns: reader, longest reader).
  | { type: 'incompatible-order'; key: Key; read: number[]; longest: number[]; txns: HistoryTxn[] }
  | { type: 'duplicate-elements'; key: Key; read: number[]; txns: HistoryTxn[] }
  // A transaction that did not read its own appends: `expected` is the whole list it should have
  // read when it had read the key before, else (`whole` false) what the list should end with.
  | { type: 'internal'; key: Key; read: number[]; expected: number[]; whole: boolean; txns: HistoryTxn[] }
  | { type: CycleKind; steps: CycleStep[]; txns: HistoryTxn[] };

interface Append {
  txn: HistoryTxn;
  final: boolean; // the transaction's last append to the key
}

interface Read {
  txn: HistoryTxn;
  key: Key;
  list: number[];
}

export function checkListAppend(history: readonly Transaction[]): Anomaly[] {
  const txns: HistoryTxn[] = history.map((t, index) => ({ ...t, index }));
  const appends = indexAppends(txns);
  const reads = committedReads(txns);
  const orders = versionOrders(reads);
  return [
    ...txns.flatMap(internalAnomalies),
    ...orderAnomalies(reads, orders),
    ...dirtyReads(reads, appends),
    ...cycleAnomalies(txns, appends, reads, orders),
  ];
}

function indexAppends(txns: readonly HistoryTxn[]): Map<Key, Map<number, Append>> {
  const byKey = new Map<Key, Map<number, Append>>();
  for (const txn of txns) {
    const last = new Map<Key, Append>();
    for (const op of txn.ops) {
      if (op[0] !== 'append') continue;
      const [, key, value] = op;
      if (!byKey.has(key)) byKey.set(key, new Map());
      const known = byKey.get(key)!.get(value);
      if (known !== undefined) throw new Error(`value ${value} appended to key ${key} by transactions ${known.txn.index} and ${txn.index}: the checker needs unique values per key`);
      const append = { txn, final: true };
      byKey.get(key)!.set(value, append);
      if (last.has(key)) last.get(key)!.final = false;
      last.set(key, append);
    }
  }
  return byKey;
}

function committedReads(txns: readonly HistoryTxn[]): Read[] {
  return txns.filter((t) => t.outcome === 'ok').flatMap((txn) => txn.ops.flatMap((op) => (op[0] === 'r' ? [{ txn, key: op[1], list: [...(op[2] ?? [])] }] : [])));
}

// The longest read of each key, with the read that returned it (the first of the longest).
function versionOrders(reads: readonly Read[]): Map<Key, Read> {
  const longest = new Map<Key, Read>();
  for (const read of reads) {
    const known = longest.get(read.key);
    if (known === undefined || read.list.length > known.list.length) longest.set(read.key, read);
  }
  return longest;
}

const isPrefix = (prefix: readonly number[], list: readonly number[]): boolean => prefix.length <= list.length && prefix.every((v, i) => list[i] === v);

function internalAnomalies(txn: HistoryTxn): Anomaly[] {
  if (txn.outcome !== 'ok') return [];
  const found: Anomaly[] = [];
  const seen = new Map<Key, { read: number[] | null; appended: number[] }>();
  for (const op of txn.ops) {
    const state = seen.get(op[1]) ?? { read: null, appended: [] };
    if (op[0] === 'append') {
      seen.set(op[1], { read: state.read, appended: [...state.appended, op[2]] });
      continue;
    }
    const read = [...(op[2] ?? [])];
    const whole = state.read !== null;
    const expected = [...(state.read ?? []), ...state.appended];
    const ok = whole ? expected.length === read.length && isPrefix(expected, read) : isPrefix(expected, read.slice(read.length - expected.length));
    if (!ok) found.push({ type: 'internal', key: op[1], read, expected, whole, txns: [txn] });
    seen.set(op[1], { read, appended: [] });
  }
  return found;
}

function orderAnomalies(reads: readonly Read[], orders: ReadonlyMap<Key, Read>): Anomaly[] {
  const found: Anomaly[] = [];
  for (const read of reads) {
    const longest = orders.get(read.key)!;
    if (new Set(read.list).size !== read.list.length) found.push({ type: 'duplicate-elements', key: read.key, read: read.list, txns: [read.txn] });
    if (!isPrefix(read.list, longest.list)) found.push({ type: 'incompatible-order', key: read.key, read: read.list, longest: longest.list, txns: [read.txn, longest.txn] });
  }
  return found;
}

function dirtyReads(reads: readonly Read[], appends: ReadonlyMap<Key, ReadonlyMap<number, Append>>): Anomaly[] {
  const found: Anomaly[] = [];
  for (const { txn, key, list } of reads) {
    for (const value of list) {
      const writer = appends.get(key)?.get(value);
      if (writer?.txn.outcome === 'failed') found.push({ type: 'G1a', key, value, txns: [writer.txn, txn] });
    }
    const last = list[list.length - 1];
    const writer = last === undefined ? undefined : appends.get(key)?.get(last);
    if (writer !== undefined && writer.txn.outcome !== 'failed' && writer.txn !== txn && !writer.final) found.push({ type: 'G1b', key, value: last!, txns: [writer.txn, txn] });
  }
  return found;
}

// Transactions of unknown outcome take part as writers only: a value of theirs that someone read
// shows they committed, while what they read was never returned.
function cycleAnomalies(txns: readonly HistoryTxn[], appends: ReadonlyMap<Key, ReadonlyMap<number, Append>>, reads: readonly Read[], orders: ReadonlyMap<Key, Read>): Anomaly[] {
  const writerOf = (key: Key, value: number | undefined): HistoryTxn | undefined => {
    const txn = value === undefined ? undefined : appends.get(key)?.get(value)?.txn;
    return txn?.outcome === 'failed' ? undefined : txn;
  };
  const graph = new DependencyGraph<CycleStep>();
  const add = (from: HistoryTxn | undefined, to: HistoryTxn | undefined, rel: Rel, key: Key, value: number | null, next: number | null): void => {
    if (from !== undefined && to !== undefined) graph.add(from.index, to.index, rel, { from: from.index, to: to.index, rel, key, value, next });
  };
  for (const [key, { list }] of orders) {
    for (let i = 0; i + 1 < list.length; i++) add(writerOf(key, list[i]), writerOf(key, list[i + 1]), 'ww', key, list[i]!, list[i + 1]!);
  }
  for (const { txn, key, list } of reads) {
    const last = list[list.length - 1];
    if (last !== undefined) add(writerOf(key, last), txn, 'wr', key, last, null);
    const order = orders.get(key)!.list;
    const next = order[list.length];
    if (next !== undefined && isPrefix(list, order)) add(txn, writerOf(key, next), 'rw', key, last ?? null, next);
  }
  return graph.cycles().map(({ kind, edges }) => ({ type: kind, steps: edges.map((e) => e.why), txns: edges.map((e) => txns[e.from]!) }));
}
