import type { Key, MicroOp } from './list_append_checker.js';

export interface ListAppendWorkloadOptions {
  // How many keys transactions choose from at a time.
  activeKeys: number;
  // A key that has been given this many appends is retired for a fresh one, as Elle's generator
  // does: lists stay short, and new keys keep landing in other chunks.
  maxAppendsPerKey: number;
  // Micro-operations per transaction, at least one.
  maxOpsPerTxn: number;
}

const DEFAULTS: ListAppendWorkloadOptions = { activeKeys: 5, maxAppendsPerKey: 32, maxOpsPerTxn: 4 };

// Returns a function that gives the micro-operations of one transaction after another: reads
// (their list null, for the executor to fill in) and appends of values unique per key. Keys are
// integers from 0. `random` is a seeded generator of numbers in [0, 1), so that a run replays.
export function listAppendWorkload(random: () => number, options: Partial<ListAppendWorkloadOptions> = {}): () => MicroOp[] {
  const { activeKeys, maxAppendsPerKey, maxOpsPerTxn } = { ...DEFAULTS, ...options };
  if (activeKeys < 1 || maxAppendsPerKey < 1 || maxOpsPerTxn < 1) throw new Error(`bad list-append workload options ${JSON.stringify(options)}`);
  const pick = (n: number): number => Math.floor(random() * n);
  const active: Key[] = Array.from({ length: activeKeys }, (_, i) => i);
  let nextKey = activeKeys;
  const appended = new Map<Key, number>();
  return () => {
    const ops: MicroOp[] = [];
    const count = 1 + pick(maxOpsPerTxn);
    for (let i = 0; i < count; i++) {
      const slot = pick(active.length);
      const key = active[slot]!;
      if (random() < 0.5) {
        ops.push(['r', key, null]);
        continue;
      }
      const value = (appended.get(key) ?? 0) + 1;
      appended.set(key, value);
      ops.push(['append', key, value]);
      if (value < maxAppendsPerKey) continue;
      appended.delete(key);
      active[slot] = nextKey++;
    }
    return ops;
  };
}
