import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Doc } from '../../src/bson/values.js';
import { compileFilter } from '../../src/query/match/matcher.js';
import { StorageEngine, type StorageOptions, type WriteUnit } from '../../src/storage/storage_engine.js';
import type { Incarnation, Scheduler } from './scheduler.js';

// The real storage engine (LMDB) of a simulated node. Its synchronous writes are what they always
// are: in the data file when they return, so a crash of the process keeps them. Its asynchronous
// work (commits by lmdb's write thread, flushes, syncs) is done in steps of the scheduler, in the
// order asked for: a crash loses the commits whose step had not come, as kill -9 loses what
// lmdb's thread had not committed yet.
export function openSimStorage(dir: string, scheduler: Scheduler, owner: Incarnation, options: StorageOptions = STORAGE_OPTIONS): StorageEngine {
  const engine = StorageEngine.open(dir, options);
  const { writeAsync, flushed, sync } = StorageEngine.prototype;
  engine.writeAsync = <T>(fn: (unit: WriteUnit) => T): Promise<T> => scheduler.disk(owner, 'commits', () => writeAsync.call(engine, fn) as Promise<T>);
  engine.flushed = () => scheduler.disk(owner, 'flushes', () => flushed.call(engine));
  engine.sync = () => scheduler.disk(owner, 'syncs', () => sync.call(engine));
  return engine;
}

// As a node opens its storage (mongod_ports.ts).
export const STORAGE_OPTIONS = {
  compilePartialFilter: (filter: Doc) => {
    const matcher = compileFilter(filter);
    return (doc: Doc) => matcher.matches(doc);
  },
};

// A directory for simulated disks: memory-backed where there is one, since no simulated crash
// loses what was written but not synced, and fsyncs would only cost time.
export function simDiskRoot(): string {
  return mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'docshard-sim-'));
}

// A node's disk as a template left it (LMDB's data file; its lock file is made anew).
export function copyDisk(template: string, dir: string): void {
  cpSync(template, dir, { recursive: true, filter: (src) => path.basename(src) !== 'lock.mdb' });
}
