import type { Timestamp } from 'bson';

// One commit, one timestamp: a write unit that changes a document takes one cluster time from the
// node's clock at its first change, and everything the unit writes (documents, index entries, a
// retryable write's session records) commits under it. Units run one at a time on this thread and
// a synchronous commit (write, writeGrouped) is done before any other work runs, so the times
// follow the commit order; an asynchronous commit (writeAsync) is tracked until it lands, so a
// read after its time can wait for it.

// The node's cluster time (sessions/logical_clock.ts).
export interface CommitClock {
  tick(): Timestamp;
  now(): Timestamp;
  advance(seen: Timestamp): void;
  // The wall clock's milliseconds under it: how long the versions commits replace are kept.
  wallMs(): number;
}

// The cluster time of the last unit an operation stamped (MongoDB's ReplClientInfo lastOp): the
// operationTime of its reply. Ambient, like the operation's deadline: set around a command's
// synchronous run and carried into its grouped write (StorageEngine.writeGrouped).
export class LastOp {
  ts: Timestamp | undefined;
  // On a replica-set member, the term of the oplog entry written at `ts` (its optime's t).
  term: number | undefined;
}

let active: LastOp | undefined;

export function withLastOp<T>(op: LastOp | undefined, fn: () => T): T {
  const previous = active;
  active = op;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

export function currentLastOp(): LastOp | undefined {
  return active;
}

interface PendingCommit {
  ts: Timestamp;
  committed: Promise<void>;
}

export class CommitTimestamps {
  private readonly pending = new Set<PendingCommit>();

  // Without a clock (storage-level tests) units are not stamped.
  constructor(private readonly clock: CommitClock | undefined) {}

  reserve(): Timestamp | undefined {
    const ts = this.clock?.tick();
    if (ts !== undefined && active !== undefined) active.ts = ts;
    return ts;
  }

  // A unit stamped `ts` whose commit lands later: `settled` is to be called once it committed or
  // failed.
  commitLater(ts: Timestamp): () => void {
    let settle!: () => void;
    const entry: PendingCommit = { ts, committed: new Promise<void>((resolve) => (settle = resolve)) };
    this.pending.add(entry);
    return () => {
      this.pending.delete(entry);
      settle();
    };
  }

  // The earliest time of a unit whose commit has not landed yet: a commit may still come at it.
  oldestPending(): Timestamp | undefined {
    let oldest: Timestamp | undefined;
    for (const p of this.pending) if (oldest === undefined || p.ts.lessThan(oldest)) oldest = p.ts;
    return oldest;
  }

  // Settles once every unit stamped at or before `ts` has committed (or failed); undefined when
  // all of them have.
  committedThrough(ts: Timestamp): Promise<void> | undefined {
    const waits: Promise<void>[] = [];
    for (const p of this.pending) if (p.ts.t < ts.t || (p.ts.t === ts.t && p.ts.i <= ts.i)) waits.push(p.committed);
    return waits.length === 0 ? undefined : Promise.all(waits).then(() => undefined);
  }
}
