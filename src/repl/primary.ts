import { advanceCommitPoint } from './commit_point_update.js';
import type { Effects } from './effects.js';
import { sendHeartbeats } from './heartbeat_sender.js';
import { newPrimaryNoop, type OplogEntry } from './oplog_entry.js';
import { compareOpTime, maxOpTime, type OpTime } from './op_time.js';
import { isVoter, majorityVoteCount, replSetSettings } from './repl_set_config.js';
import { stepDownToFollower } from './step_down.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

// The optime of the next entry this primary writes: the node's clock, or just past its last entry
// when the clock is behind it, so its entries always follow what it holds.
function nextOpTime(s: TopologyState): OpTime {
  return { ts: Math.max(s.clockTs, lastAppliedOpTime(s).ts + 1), t: s.term };
}

function append(s: TopologyState, fx: Effects, entry: OplogEntry): TopologyState {
  fx.add({ type: 'appendOplog', entries: [entry] });
  return { ...s, oplog: [...s.oplog, entry] };
}

// The candidate won: it is PRIMARY at once but not writable. It hears from every member (so it
// knows how far behind it is), catches up for at most catchUpTimeoutMillis, then writes its no-op.
// The members that answered its vote requests count as just heard from, so it does not step down
// before the first heartbeats have had time to answer.
export function becomeLeader(s: TopologyState, fx: Effects): TopologyState {
  const timeoutMs = replSetSettings(s.config).catchUpTimeoutMillis;
  let next: TopologyState = {
    ...s,
    role: 'leader',
    memberState: 'PRIMARY',
    election: null,
    electionTimeoutAtMs: null,
    priorityTakeoverAtMs: null,
    catchupTakeoverAtMs: null,
    members: s.members.map((m, i) => (s.election?.responded.includes(i) ? { ...m, lastUpdateMs: s.nowMs } : m)),
    fetch: { ...s.fetch, syncSourceIndex: null, inFlight: null, nextFetchAtMs: s.nowMs },
    leader: {
      writable: false,
      firstOpTimeOfMyTerm: null,
      catchUp: { deadlineMs: timeoutMs < 0 ? Number.POSITIVE_INFINITY : s.nowMs + timeoutMs, targetOpTime: null, heardFrom: [s.selfIndex] },
    },
  };
  fx.add({ type: 'memberStateChanged', state: 'PRIMARY', term: next.term, writable: false });
  next = sendHeartbeats(next, fx);
  return timeoutMs === 0 ? finishCatchUp(next, fx) : checkCatchUp(next, fx);
}

// A heartbeat answer during catch-up: once a majority has answered, the freshest optime among them
// is what the new primary must reach.
export function noteCatchUpResponse(s: TopologyState, fx: Effects, from: number): TopologyState {
  const catchUp = s.leader?.catchUp;
  if (catchUp === undefined || catchUp === null || catchUp.heardFrom.includes(from)) return s;
  const heardFrom = [...catchUp.heardFrom, from];
  let target = catchUp.targetOpTime;
  const voters = heardFrom.filter((i) => isVoter(s.config.members[i]!));
  if (target === null && voters.length >= majorityVoteCount(s.config)) {
    target = heardFrom.reduce((acc, i) => (i === s.selfIndex ? acc : maxOpTime(acc, s.members[i]!.appliedOpTime)), lastAppliedOpTime(s));
  }
  return checkCatchUp({ ...s, leader: { ...s.leader!, catchUp: { ...catchUp, heardFrom, targetOpTime: target } } }, fx);
}

// Ends catch-up when the target is reached or the time is up.
export function checkCatchUp(s: TopologyState, fx: Effects): TopologyState {
  const catchUp = s.leader?.catchUp;
  if (catchUp === undefined || catchUp === null) return s;
  const reached = catchUp.targetOpTime !== null && compareOpTime(lastAppliedOpTime(s), catchUp.targetOpTime) >= 0;
  const single = majorityVoteCount(s.config) === 1;
  return reached || single || s.nowMs >= catchUp.deadlineMs ? finishCatchUp(s, fx) : s;
}

// The "new primary" no-op in the new term, then writes are accepted.
export function finishCatchUp(s: TopologyState, fx: Effects): TopologyState {
  if (s.leader === null || s.leader.writable) return s;
  const noop = newPrimaryNoop(nextOpTime(s));
  let next = append(s, fx, noop);
  next = {
    ...next,
    fetch: { ...s.fetch, syncSourceIndex: null, inFlight: null, nextFetchAtMs: s.nowMs },
    leader: { writable: true, catchUp: null, firstOpTimeOfMyTerm: { ts: noop.ts, t: noop.t } },
  };
  fx.add({ type: 'memberStateChanged', state: 'PRIMARY', term: next.term, writable: true });
  return advanceCommitPoint(next, fx);
}

// A primary that has not heard from a majority of voters (itself included) within the election
// timeout steps down: a majority elsewhere may have elected another.
export function checkMajorityLiveness(s: TopologyState, fx: Effects): TopologyState {
  if (s.role !== 'leader') return s;
  const timeoutMs = replSetSettings(s.config).electionTimeoutMillis;
  const seen = s.config.members.filter((c, i) => {
    if (!isVoter(c)) return false;
    if (i === s.selfIndex) return true;
    const heard = s.members[i]!.lastUpdateMs;
    return heard !== null && s.nowMs - heard < timeoutMs;
  }).length;
  return seen >= majorityVoteCount(s.config) ? s : stepDownToFollower(s, fx);
}

// A client's write: an entry of this term on a writable primary, NotWritablePrimary anywhere else.
export function clientWrite(s: TopologyState, fx: Effects, o: Readonly<Record<string, unknown>>): TopologyState {
  if (s.role !== 'leader' || s.leader === null || !s.leader.writable) {
    fx.add({ type: 'writeRejected', code: 10107, codeName: 'NotWritablePrimary' });
    return s;
  }
  const opTime = nextOpTime(s);
  const next = append(s, fx, { ts: opTime.ts, t: opTime.t, op: 'i', o });
  fx.add({ type: 'writeAccepted', opTime });
  return advanceCommitPoint(next, fx);
}
