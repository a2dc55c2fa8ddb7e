import type { Clock } from '../base/clock.js';

// The replication core keeps its deadlines (the next heartbeat, the election timeout, a freeze's
// end) as absolute times of the clock it is given, and a timer waits out the difference. A wall
// clock stepped back (by NTP, by an operator) would put every deadline that far ahead: no
// heartbeats, no liveness checks and no elections from this member until the wall clock caught up
// again. MongoDB's executor turns each deadline into a wait when it schedules it, so a step only
// moves what is scheduled after it. This clock follows the wall clock but never goes back: a step
// back is taken up (the time stands for the moment since the last reading) and time goes on from
// there at the wall clock's rate. A step forward passes through, as it does in MongoDB: deadlines
// fall due at once (a primary may find the members unheard and step down, a secondary may stand).
export function steadyClock(wall: Clock): Clock {
  let behind = 0;
  let last = -Infinity;
  return {
    now() {
      const t = wall.now() + behind;
      if (t < last) behind += last - t;
      last = Math.max(last, t);
      return last;
    },
    sleep: (ms, options) => wall.sleep(ms, options),
    setTimer: (ms, fn, options) => wall.setTimer(ms, fn, options),
    setRepeatingTimer: (ms, fn, options) => wall.setRepeatingTimer(ms, fn, options),
  };
}
