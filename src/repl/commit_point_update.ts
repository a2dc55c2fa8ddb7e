import { learnedCommitPoint, majorityCommitPoint } from './commit_point.js';
import type { Effects } from './effects.js';
import { compareOpTime, type OpTime } from './op_time.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

function moveCommitPoint(s: TopologyState, fx: Effects, to: OpTime): TopologyState {
  if (compareOpTime(to, s.lastCommittedOpTime) <= 0) return s;
  fx.add({ type: 'commitPointAdvanced', opTime: to });
  return { ...s, lastCommittedOpTime: to };
}

// The primary recomputes its commit point whenever a position it knows moves.
export function advanceCommitPoint(s: TopologyState, fx: Effects): TopologyState {
  if (s.role !== 'leader' || s.leader === null) return s;
  const durable = s.members.map((m, i) => (i === s.selfIndex ? lastAppliedOpTime(s) : m.durableOpTime));
  const point = majorityCommitPoint(s.config, durable, s.leader.firstOpTimeOfMyTerm);
  return point === null ? s : moveCommitPoint(s, fx, point);
}

// A member that is not primary takes the commit point it hears of, within what it holds.
export function learnCommitPoint(s: TopologyState, fx: Effects, learned: OpTime): TopologyState {
  if (s.role === 'leader') return s;
  return moveCommitPoint(s, fx, learnedCommitPoint(s.lastCommittedOpTime, learned, s.oplog));
}
