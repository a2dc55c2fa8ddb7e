import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LogicalClock } from '../sessions/logical_clock.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { equalities } from '../storage/test_support.js';
import { enableOplog, type OplogOptions, type ReplicatedOplog } from './replicated_oplog.js';

// A test body run on an engine with a real clock and the oplog enabled (options as given).
export function withOplog(options: Partial<OplogOptions>, fn: (storage: StorageEngine, oplog: ReplicatedOplog, clock: LogicalClock) => void | Promise<void>) {
  return async (): Promise<void> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-oplog-'));
    const clock = new LogicalClock(() => Date.now());
    const storage = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
    try {
      await fn(storage, enableOplog(storage, { term: () => 1, checkCanWrite: () => undefined, clock, ...options }), clock);
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
