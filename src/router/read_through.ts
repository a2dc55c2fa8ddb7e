// One key of a read-through cache, as MongoDB's ReadThroughCache keeps it: the answer is read
// through `lookUp` when asked for and not fresh; callers asking while a look-up runs share it;
// an invalidation that arrives during a look-up leaves the entry stale, and a caller arriving
// after it waits for that look-up and then reads again, since what it read may predate the
// change. The I/O is the caller's `lookUp`, so a test can order every step by hand.
export class ReadThroughEntry<T> {
  private current: T | undefined;
  private isFresh = false;
  // Counts invalidations, so a look-up can tell whether one came while it was reading.
  private invalidations = 0;
  private running: Promise<T> | undefined;
  private runningAt = 0;

  // `lookUp` gets the previous answer (fresh or not) to read only what changed since; answers
  // `keep` refuses are handed out but not cached.
  constructor(private readonly lookUp: (previous: T | undefined) => Promise<T>, private readonly keep: (value: T) => boolean = () => true) {}

  get fresh(): boolean {
    return this.isFresh;
  }

  // The last answer; trust it only while `fresh`.
  get value(): T | undefined {
    return this.current;
  }

  // True when nothing is cached or running: a map may drop the entry.
  get idle(): boolean {
    return !this.isFresh && this.running === undefined;
  }

  get(): Promise<T> {
    if (this.isFresh) return Promise.resolve(this.current as T);
    const running = this.running;
    if (running === undefined) return this.start();
    if (this.runningAt === this.invalidations) return running;
    const again = (): Promise<T> => this.get();
    return running.then(again, again);
  }

  invalidate(): void {
    this.isFresh = false;
    this.invalidations += 1;
  }

  private start(): Promise<T> {
    const at = this.invalidations;
    const running = this.lookUp(this.current).then((value) => {
      this.running = undefined;
      this.current = value;
      this.isFresh = this.invalidations === at && this.keep(value);
      return value;
    }, (err: unknown) => {
      this.running = undefined;
      throw err;
    });
    this.running = running;
    this.runningAt = at;
    return running;
  }
}
