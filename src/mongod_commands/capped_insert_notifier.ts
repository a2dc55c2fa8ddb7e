import type { KvWriter, OpObserver } from '../storage/op_observer.js';
import type { Clock } from '../base/clock.js';

// Wakes the getMores of awaitData cursors when a document is inserted into the collection they
// tail (MongoDB's CappedInsertNotifier). It only ever says "look again": a waiter reads the
// collection itself and waits again if what was inserted does not match its filter.
export class CappedInsertNotifier implements OpObserver {
  private readonly waiting = new Map<string, Set<() => void>>();

  // `clock`: a waiter's time limit is one of its timers.
  constructor(private readonly clock: Clock) {}

  onInsert(_w: KvWriter, ns: string): void {
    const wakers = this.waiting.get(ns);
    if (wakers === undefined) return;
    this.waiting.delete(ns);
    // Called inside the insert's write unit, which commits when the task running it ends: the
    // waiters must read after that, so they are woken from the next turn of the event loop.
    setImmediate(() => {
      for (const wake of wakers) wake();
    });
  }

  // Resolves at the next insert into `ns`, after `timeoutMs`, or when `signal` aborts, whichever
  // comes first.
  waitForInsert(ns: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        timer.cancel();
        signal.removeEventListener('abort', wake);
        this.waiting.get(ns)?.delete(wake);
        if (this.waiting.get(ns)?.size === 0) this.waiting.delete(ns);
        resolve();
      };
      const timer = this.clock.setTimer(timeoutMs, wake);
      signal.addEventListener('abort', wake, { once: true });
      let wakers = this.waiting.get(ns);
      if (wakers === undefined) this.waiting.set(ns, (wakers = new Set()));
      wakers.add(wake);
    });
  }
}
