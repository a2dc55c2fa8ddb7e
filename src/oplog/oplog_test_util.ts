import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Timestamp } from 'bson';
import type { CommitClock } from '../storage/commit_timestamps.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { equalities } from '../storage/test_support.js';
import { enableOplog, type OplogOptions, type ReplicatedOplog } from './replicated_oplog.js';

// The node's cluster time as the oplog needs it: wall seconds and a counter, moved past any time
// it is given (sessions/logical_clock.ts, which this folder may not import, does the same).
export class TestClock implements CommitClock {
  private current = new Timestamp({ t: 0, i: 0 });

  tick(): Timestamp {
    const wall = Math.floor(Date.now() / 1000);
    this.current = wall > this.current.t ? new Timestamp({ t: wall, i: 1 }) : new Timestamp({ t: this.current.t, i: this.current.i + 1 });
    return this.current;
  }

  now(): Timestamp {
    return this.current;
  }

  advance(seen: Timestamp): void {
    if (seen.greaterThan(this.current)) this.current = seen;
  }

  wallMs(): number {
    return Date.now();
  }
}

// A test body run on an engine with a real clock and the oplog enabled (options as given).
export function withOplog(options: Partial<OplogOptions>, fn: (storage: StorageEngine, oplog: ReplicatedOplog, clock: TestClock) => void | Promise<void>) {
  return async (): Promise<void> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-oplog-'));
    const clock = new TestClock();
    const storage = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
    try {
      await fn(storage, enableOplog(storage, { term: () => 1, checkCanWrite: () => undefined, clock, ...options }), clock);
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
