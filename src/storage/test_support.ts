import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Doc } from '../bson/values.js';
import { StorageEngine } from './storage_engine.js';

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
