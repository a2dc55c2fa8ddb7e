import { assert, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Clock, Timer } from '../base/clock.js';
import type { FailPoints } from '../base/fail_points.js';

// DDLLockManager::kDefaultLockTimeout.
const DEFAULT_LOCK_TIMEOUT_MS = 5 * 60_000;

// MongoDB's fail point for tests that expect LockBusy: {timeoutMillisecs} replaces the timeout.
const OVERRIDE_TIMEOUT_FAIL_POINT = 'overrideDDLLockTimeout';

// Whom an exclusive lock belongs to, and who waits for it in arrival order.
interface ResourceLock {
  reason: string;
  readonly waiters: Waiter[];
}

interface Waiter {
  readonly reason: string;
  readonly granted: () => void;
  readonly timer: Timer;
}

export interface DDLLockRequest {
  readonly db: string;
  // Further databases an operation locks with `db` (a rename into another database): all of them
  // are taken in name order before any collection, so two such operations crosswise wait rather
  // than deadlock.
  readonly databases?: readonly string[];
  readonly collections?: readonly string[];
}

// MongoDB's DDLLockManager: in-memory exclusive locks on a database and its collections, taken by
// an operation that reads the catalog, waits on others, then changes it, so that two such
// operations on one namespace decide one after the other. A database is locked before its
// collections and released after them, so two operations never wait for each other crosswise.
// Nothing is persisted: a restarted process holds no lock.
export class DDLLockManager {
  private readonly held = new Map<string, ResourceLock>();

  constructor(private readonly clock: Clock, private readonly failPoints: FailPoints) {}

  // Runs `fn` holding the database's lock, then each collection's in the order given; `reason`
  // names the holder in the LockBusy that a request waiting longer than the timeout answers.
  async withLocks<T>(request: DDLLockRequest, reason: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(request, reason);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  // Takes the locks as withLocks does and hands back what releases them in reverse order: a DDL
  // coordinator holds them across its phases, and one recovered at startup takes them before the
  // node accepts a new DDL.
  async acquire(request: DDLLockRequest, reason: string): Promise<() => void> {
    const databases = request.databases === undefined ? [request.db] : [...new Set([request.db, ...request.databases])].sort();
    const names = [...databases, ...(request.collections ?? [])];
    const taken: string[] = [];
    const release = (): void => {
      for (const name of taken.reverse()) this.unlock(name);
      taken.length = 0;
    };
    try {
      for (const name of names) {
        await this.lock(name, reason);
        taken.push(name);
      }
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  private lock(name: string, reason: string): Promise<void> {
    const current = this.held.get(name);
    if (current === undefined) {
      this.held.set(name, { reason, waiters: [] });
      return Promise.resolve();
    }
    const timeoutMs = this.timeoutMs();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        reason,
        granted: resolve,
        timer: this.clock.setTimer(timeoutMs, () => {
          current.waiters.splice(current.waiters.indexOf(waiter), 1);
          reject(new MongoError(ErrorCodes.LockBusy, `Failed to acquire DDL lock for namespace '${name}' after ${timeoutMs}ms that is currently locked with reason '${current.reason}'`));
        }, { unref: true }),
      };
      current.waiters.push(waiter);
    });
  }

  // Hands the lock to the longest waiter, so a stream of requests cannot starve an earlier one.
  private unlock(name: string): void {
    const current = this.held.get(name);
    assert(current !== undefined, `DDL lock ${name} released but not held`);
    const next = current.waiters.shift();
    if (next === undefined) {
      this.held.delete(name);
      return;
    }
    next.timer.cancel();
    current.reason = next.reason;
    next.granted();
  }

  private timeoutMs(): number {
    const override = this.failPoints.shouldFire(OVERRIDE_TIMEOUT_FAIL_POINT)?.timeoutMillisecs;
    return typeof override === 'number' ? override : DEFAULT_LOCK_TIMEOUT_MS;
  }
}
