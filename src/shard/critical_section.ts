import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Clock, Timer } from '../base/clock.js';

// How long an operation waits for a migration's critical section before giving up
// (MongoDB's migrationLockAcquisitionMaxWaitMS is 500 ms for the lock; the critical section itself
// is bounded by the donor's commit timeout, so waiting operations get a little longer than that).
export const CRITICAL_SECTION_WAIT_MS = 30_000;

interface Held {
  blockReads: boolean;
  readonly released: Promise<void>;
  readonly release: () => void;
}

// The donor's per-namespace gate during a migration's commit (MongoDB's
// CollectionCriticalSection): while held, writes to the collection wait; once the commit is sent
// to the config server, reads wait too, so no operation on the donor sees the range after the
// config server has given it away. Waiters resume when the section is released, then check their
// shard version, which the donor refreshed before releasing.
export class CriticalSection {
  private readonly held = new Map<string, Held>();

  // `clock`: a waiter's time limit is one of its timers.
  constructor(private readonly clock: Clock) {}

  enter(nss: string): void {
    if (this.held.has(nss)) return;
    let release!: () => void;
    const released = new Promise<void>((r) => { release = r; });
    this.held.set(nss, { blockReads: false, released, release });
  }

  enterForReads(nss: string): void {
    this.enter(nss);
    this.held.get(nss)!.blockReads = true;
  }

  exit(nss: string): void {
    const held = this.held.get(nss);
    if (held === undefined) return;
    this.held.delete(nss);
    held.release();
  }

  isHeld(nss: string): boolean {
    return this.held.has(nss);
  }

  // Whether this kind of operation on `nss` has to wait now.
  blocks(nss: string, kind: 'read' | 'write'): boolean {
    const held = this.held.get(nss);
    return held !== undefined && (kind === 'write' || held.blockReads);
  }

  // Resolves at once when `nss` is free for this kind of operation; otherwise when the section is
  // released, or rejects with ExceededTimeLimit after `timeoutMs`.
  async waitFor(nss: string, kind: 'read' | 'write', timeoutMs = CRITICAL_SECTION_WAIT_MS): Promise<void> {
    for (;;) {
      const held = this.held.get(nss);
      if (held === undefined || (kind === 'read' && !held.blockReads)) return;
      let timer: Timer | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = this.clock.setTimer(timeoutMs, () => reject(new MongoError(ErrorCodes.ExceededTimeLimit,
          `Failed to acquire the critical section for ${nss} within ${timeoutMs}ms: a chunk migration is committing`)));
      });
      try {
        await Promise.race([held.released, timedOut]);
      } finally {
        timer?.cancel();
      }
    }
  }
}
