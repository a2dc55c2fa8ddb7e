import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BSON, Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { StorageEngine } from './storage_engine.js';
import type { CommitClock } from './commit_timestamps.js';
import { systemClock } from '../base/clock.js';
import { catalogKey, catalogRangeEnd, catalogRangeStart, clockSecondsKey, indexSpace, nextIdKey, recordSpace } from './key_layout.js';
import { statsKey } from './collection_stats.js';

// For tests that need a real storage engine on a temporary directory.

// Partial filters of the form {field: value, ...}: enough to tell which documents an index holds.
export const equalities = (filter: Doc) => (doc: Doc): boolean => Object.entries(filter).every(([k, v]) => doc[k] === v);

// A test body run on a storage engine in a fresh temporary directory, closed and removed after.
export function withEngine(fn: (engine: StorageEngine, dir: string) => Promise<void> | void) {
  return async (): Promise<void> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    const engine = StorageEngine.open(dir, { compilePartialFilter: equalities });
    try {
      await fn(engine, dir);
    } finally {
      await engine.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

// A clock that counts: the n-th tick is (100, n); it starts at (100, 0).
export function countingClock(): CommitClock & { ticks: number } {
  return {
    ticks: 0,
    tick() {
      this.ticks += 1;
      return new Timestamp({ t: 100, i: this.ticks });
    },
    now() {
      return new Timestamp({ t: 100, i: this.ticks });
    },
    // Its times stay in second 100, where a test that opens an engine again goes on counting.
    advance() {},
    wallMs: () => systemClock.now(),
  };
}

// withEngine on an engine that stamps its commits with a counting clock.
export function withClockedEngine(fn: (engine: StorageEngine, clock: ReturnType<typeof countingClock>) => Promise<void> | void) {
  return async (): Promise<void> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    const clock = countingClock();
    const engine = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
    try {
      await fn(engine, clock);
    } finally {
      await engine.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const EMPTY = Buffer.alloc(0);

// Every key and value of the store (through the active view, if any), by space: the main space
// (less the id allocator and the clock second, which only grow) and the spaces of every collection
// its catalog names, for comparing a store with a snapshot of it byte for byte. The collections
// `omit` names are left out, their catalog entries and counts included.
export function dumpStore(engine: StorageEngine, omit: (ns: string) => boolean = () => false): Record<string, string[]> {
  const pairs = (entries: Iterable<{ key: Buffer; value: Buffer }>): string[] => [...entries].map((e) => `${e.key.toString('hex')}=${e.value.toString('hex')}`);
  const catalog = [...engine.kv.range(catalogRangeStart, catalogRangeEnd)].map((e) => BSON.deserialize(e.value) as { ns: string; id: number; indexes: { id: number }[] });
  const skipped: Buffer[] = [nextIdKey, clockSecondsKey];
  for (const entry of catalog) if (omit(entry.ns)) skipped.push(catalogKey(entry.ns), statsKey(entry.id));
  const out: Record<string, string[]> = { main: pairs([...engine.kv.range(EMPTY, EMPTY)].filter((e) => !skipped.some((k) => k.equals(e.key)))) };
  for (const entry of catalog) {
    if (omit(entry.ns)) continue;
    for (const space of [recordSpace(entry.id), ...entry.indexes.map((i) => indexSpace(i.id))]) out[space] = pairs(engine.kv.space(space).range(EMPTY, EMPTY));
  }
  return out;
}
