import type { Doc } from '../bson/values.js';
import { SCRAM_MECHANISMS, type ScramMechanism } from './scram.js';

// What a process's logins came to, and the brake on guessing (beyond MongoDB, which only sleeps
// after a failure): per client address and per user, `failuresMax` failed logins within
// `windowMs` close that address or that user to further attempts for `lockoutMs`, answered
// AuthenticationFailed like any failure without the password being looked at. Counted as
// MongoDB's serverStatus counts logins (security.authentication.mechanisms), with docshard's
// `throttled` section beside. Deterministic: the caller gives the clock.

export interface AttemptLimits {
  failuresMax: number;
  windowMs: number;
  lockoutMs: number;
  // Keys remembered at most; the oldest is forgotten first, so a flood of addresses costs bounded memory.
  keysMax: number;
}

export const ADDRESS_LIMITS: AttemptLimits = { failuresMax: 20, windowMs: 60_000, lockoutMs: 60_000, keysMax: 10_000 };
export const USER_LIMITS: AttemptLimits = { failuresMax: 10, windowMs: 60_000, lockoutMs: 60_000, keysMax: 10_000 };

// The cluster's internal user (internal_user.ts) is never braked, nor counted against an address:
// its password is the cluster's key, and locking it, or the address of a host the cluster's
// processes share with a guesser, would cut the cluster apart. Its failures are still counted.
const INTERNAL_USER = 'local.__system';

interface Failures { windowStartMs: number; count: number; lockedUntilMs: number }

class FailureWindow {
  private readonly keys = new Map<string, Failures>();
  lockouts = 0;

  constructor(private readonly limits: AttemptLimits) {}

  isLocked(key: string, nowMs: number): boolean {
    const entry = this.keys.get(key);
    return entry !== undefined && entry.lockedUntilMs > nowMs;
  }

  fail(key: string, nowMs: number): void {
    let entry = this.keys.get(key);
    if (entry === undefined || nowMs - entry.windowStartMs >= this.limits.windowMs) {
      entry = { windowStartMs: nowMs, count: 0, lockedUntilMs: entry?.lockedUntilMs ?? 0 };
    }
    entry.count += 1;
    if (entry.count >= this.limits.failuresMax) {
      entry.lockedUntilMs = nowMs + this.limits.lockoutMs;
      entry.windowStartMs = nowMs;
      entry.count = 0;
      this.lockouts += 1;
    }
    // Re-inserted, so the Map's order is by last failure and the first key the stalest.
    this.keys.delete(key);
    this.keys.set(key, entry);
    if (this.keys.size > this.limits.keysMax) this.keys.delete(this.keys.keys().next().value!);
  }

  succeed(key: string): void {
    const entry = this.keys.get(key);
    if (entry !== undefined && entry.lockedUntilMs === 0) this.keys.delete(key);
  }

  lockedCount(nowMs: number): number {
    let n = 0;
    for (const entry of this.keys.values()) if (entry.lockedUntilMs > nowMs) n += 1;
    return n;
  }
}

interface MechanismCounts {
  authenticate: { received: number; successful: number; failed: number };
  speculativeAuthenticate: { received: number; successful: number; failed: number };
}

export class AuthenticationAttempts {
  private readonly addresses: FailureWindow;
  private readonly users: FailureWindow;
  private readonly counts = new Map<ScramMechanism, MechanismCounts>();
  private throttledAttempts = 0;

  constructor(private readonly now: () => number, addressLimits = ADDRESS_LIMITS, userLimits = USER_LIMITS) {
    this.addresses = new FailureWindow(addressLimits);
    this.users = new FailureWindow(userLimits);
    for (const m of SCRAM_MECHANISMS) this.counts.set(m, { authenticate: zero(), speculativeAuthenticate: zero() });
  }

  // Whether a login of `user` ("db.user") from `address` may be tried; false counts as throttled.
  admits(address: string, user: string | undefined): boolean {
    if (user === INTERNAL_USER) return true;
    const now = this.now();
    if (!this.addresses.isLocked(address, now) && (user === undefined || !this.users.isLocked(user, now))) return true;
    this.throttledAttempts += 1;
    return false;
  }

  // One login begun (saslStart, or hello's speculativeAuthenticate) with a mechanism docshard speaks.
  received(mechanism: unknown, speculative: boolean): void {
    const c = this.countsOf(mechanism);
    if (c !== undefined) (speculative ? c.speculativeAuthenticate : c.authenticate).received += 1;
  }

  failed(mechanism: unknown, speculative: boolean, address: string, user: string | undefined): void {
    const now = this.now();
    if (user !== INTERNAL_USER) {
      this.addresses.fail(address, now);
      if (user !== undefined) this.users.fail(user, now);
    }
    const c = this.countsOf(mechanism);
    if (c !== undefined) (speculative ? c.speculativeAuthenticate : c.authenticate).failed += 1;
  }

  succeeded(mechanism: unknown, speculative: boolean, address: string, user: string): void {
    this.addresses.succeed(address);
    this.users.succeed(user);
    const c = this.countsOf(mechanism);
    if (c !== undefined) (speculative ? c.speculativeAuthenticate : c.authenticate).successful += 1;
  }

  // serverStatus's security.authentication.
  serverStatus(): Doc {
    const now = this.now();
    const mechanisms: Doc = {};
    for (const [m, c] of this.counts) mechanisms[m] = { authenticate: { ...c.authenticate }, speculativeAuthenticate: { ...c.speculativeAuthenticate } };
    return {
      mechanisms,
      throttled: {
        attempts: this.throttledAttempts,
        addressLockouts: this.addresses.lockouts,
        userLockouts: this.users.lockouts,
        addressesLocked: this.addresses.lockedCount(now),
        usersLocked: this.users.lockedCount(now),
      },
    };
  }

  private countsOf(mechanism: unknown): MechanismCounts | undefined {
    return this.counts.get(mechanism as ScramMechanism);
  }
}

function zero(): { received: number; successful: number; failed: number } {
  return { received: 0, successful: 0, failed: 0 };
}
