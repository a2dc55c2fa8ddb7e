import type { OplogEntry } from './oplog_entry.js';
import { compareOpTime, opTimeEquals, type OpTime } from './op_time.js';
import { isVoter, writeMajorityCount, type ReplSetConfig } from './repl_set_config.js';

// The primary's majority commit point: the newest optime that a write majority of data-bearing
// voters hold durably. `durableOpTimes` is by member index (the primary's own included). Only an
// optime at or after the first entry of the primary's own term counts: an entry of an older term
// that a majority holds may still be lost to a member that never saw it and wins an election (the
// Raft figure 8 case), so it is committed only under the new primary's no-op.
export function majorityCommitPoint(
  config: ReplSetConfig,
  durableOpTimes: readonly OpTime[],
  firstOpTimeOfMyTerm: OpTime | null,
): OpTime | null {
  if (firstOpTimeOfMyTerm === null) return null;
  const held = config.members
    .map((m, i) => ({ m, o: durableOpTimes[i]! }))
    .filter(({ m }) => isVoter(m) && !m.arbiterOnly)
    .map(({ o }) => o)
    .sort((a, b) => compareOpTime(b, a));
  const candidate = held[writeMajorityCount(config) - 1];
  if (candidate === undefined || compareOpTime(candidate, firstOpTimeOfMyTerm) < 0) return null;
  return candidate;
}

// What a secondary takes of a commit point it hears of (from a heartbeat or its sync source): never
// an optime past what it holds, and never one of a history it may not share. It advances to the
// learned optime if its oplog has that very entry; past its last entry only if that entry is of the
// learned optime's term, since then it came from the same primary and lies before the learned one
// in that primary's oplog.
export function learnedCommitPoint(current: OpTime, learned: OpTime, oplog: readonly OplogEntry[]): OpTime {
  if (compareOpTime(learned, current) <= 0) return current;
  const last = oplog[oplog.length - 1];
  if (last === undefined) return current;
  const lastOpTime = { ts: last.ts, t: last.t };
  if (compareOpTime(learned, lastOpTime) > 0) {
    return last.t === learned.t && compareOpTime(lastOpTime, current) > 0 ? lastOpTime : current;
  }
  return oplog.some((e) => opTimeEquals({ ts: e.ts, t: e.t }, learned)) ? learned : current;
}
