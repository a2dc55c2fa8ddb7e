// How many user operations a donor serves per second, over about the last second.
//
// The clone pacer asks this once per _migrateClone batch. A rate over the interval since the
// previous batch would be too short a look: the recipient asks for the next batch as soon as the
// last one arrives, so the interval is one batch's round trip, most of which the donor spends
// reading the batch in one turn of its event loop, finishing no user operation though its users
// are waiting. A timer (mongod_server.ts) samples the node's op counters, which the meter reads
// itself; it keeps the samples that span the window.
export const LOAD_WINDOW_MS = 1000;
export const LOAD_SAMPLE_INTERVAL_MS = 100;

export type OpCounters = Readonly<Record<'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command', number>>;

// User operations: what a client asks of the data. Commands (hello, serverStatus, the
// migration's own) are not load.
export function userOps(c: OpCounters): number {
  return c.insert + c.query + c.update + c.delete + c.getmore;
}

interface Sample {
  readonly nowMs: number;
  readonly ops: number;
}

export class UserLoadMeter {
  private readonly samples: Sample[] = [];

  // `counters`: the node's own, which its commands keep counting into.
  constructor(private readonly counters: OpCounters) {}

  sample(nowMs: number): void {
    this.samples.push({ nowMs, ops: userOps(this.counters) });
    // The oldest kept sample is the last one at or before the window's start, so the rate always
    // spans a whole window once there is that much history.
    while (this.samples.length > 1 && this.samples[1]!.nowMs <= nowMs - LOAD_WINDOW_MS) this.samples.shift();
  }

  opsPerSecond(nowMs: number): number {
    const oldest = this.samples[0];
    if (oldest === undefined || nowMs <= oldest.nowMs) return 0;
    return ((userOps(this.counters) - oldest.ops) * 1000) / (nowMs - oldest.nowMs);
  }
}
