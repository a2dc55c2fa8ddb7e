import type { Doc } from '../bson/values.js';
import type { OwnershipFilter } from './ownership_filter.js';

interface OngoingQuery {
  readonly ns: string;
  readonly ownership: OwnershipFilter;
  // Made only when something waits for the read (a range deletion), not for every read.
  done: Promise<void> | undefined;
  release: (() => void) | undefined;
}

// Routed reads still running on a shard, each with the ownership snapshot it started with
// (MongoDB's metadata tracker behind getOngoingQueriesCompletionFuture). A range the shard gave
// away is deleted only once no read whose snapshot still owns part of it is running: such a read
// must go on seeing those documents, while reads that started after the refresh filter them out.
export class OngoingQueries {
  private readonly queries = new Set<OngoingQuery>();

  // Wraps a read's results: the read counts as ongoing from its first document until its results
  // are exhausted or abandoned (the cursor killed or reaped).
  track<T>(ns: string, ownership: OwnershipFilter, results: Iterable<T>): Iterable<T> {
    return new TrackedIterator(this.queries, { ns, ownership, done: undefined, release: undefined }, results);
  }

  // Resolves once every read that is running now and may see [min, max) of `ns` has finished.
  async completion(ns: string, min: Doc, max: Doc): Promise<void> {
    const waiting = [...this.queries].filter((q) => q.ns === ns && q.ownership.overlaps(min, max)).map((q) => q.done ??= new Promise<void>((resolve) => { q.release = resolve; }));
    await Promise.all(waiting);
  }

  count(ns: string, min: Doc, max: Doc): number {
    return [...this.queries].filter((q) => q.ns === ns && q.ownership.overlaps(min, max)).length;
  }
}

// A generator's `try { yield* results } finally { ... }` as a plain iterator (its own iterable,
// as a generator is): registered at the first next(), gone once the results end, fail or are
// returned. Every routed read goes through one, so it costs no generator object and no promise.
class TrackedIterator<T> implements IterableIterator<T> {
  private inner: Iterator<T> | undefined;
  private state: 'new' | 'running' | 'done' = 'new';

  constructor(private readonly queries: Set<OngoingQuery>, private readonly query: OngoingQuery, private readonly results: Iterable<T>) {}

  [Symbol.iterator](): IterableIterator<T> {
    return this;
  }

  next(): IteratorResult<T> {
    if (this.state === 'done') return { done: true, value: undefined };
    if (this.state === 'new') {
      this.state = 'running';
      this.queries.add(this.query);
      this.inner = this.results[Symbol.iterator]();
    }
    let r: IteratorResult<T>;
    try {
      r = this.inner!.next();
    } catch (err) {
      this.finish();
      throw err;
    }
    if (r.done) this.finish();
    return r;
  }

  return(value?: unknown): IteratorResult<T> {
    if (this.state === 'running') {
      try {
        this.inner!.return?.();
      } finally {
        this.finish();
      }
    }
    this.state = 'done';
    return { done: true, value: value as T };
  }

  private finish(): void {
    this.state = 'done';
    this.queries.delete(this.query);
    this.query.release?.();
  }
}
