// A closed-loop load: `requesters` each keep one operation in flight, and every operation is
// timed on the wall clock (one machine, so a node's changelog times compare with these).
export interface TimedOp {
  start: number;
  end: number;
  ok: boolean;
}

export const wall = (): number => performance.timeOrigin + performance.now();

// `op(i)` is requester-numbered: requester w runs i = w, w + 1, ... until stop().
export function startTimedLoad(requesters: number, op: (i: number) => Promise<unknown>): { ops: TimedOp[]; stop(): Promise<void> } {
  const ops: TimedOp[] = [];
  let running = true;
  const workers = Array.from({ length: requesters }, async (_, w) => {
    for (let i = w; running; i++) {
      const start = wall();
      let ok = true;
      try {
        await op(i);
      } catch {
        ok = false;
      }
      ops.push({ start, end: wall(), ok });
    }
  });
  return {
    ops,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}
