import { compareOpTime, type OpTime } from './op_time.js';
import type { ReplSetConfig } from './repl_set_config.js';

// When a write concern is met on a replica set, and when it never can be (MongoDB's
// ReplicationCoordinatorImpl::_doneWaitingForReplication and checkIfWriteConcernCanBeSatisfied).
// Parsing the client's document and waiting for it belong to the driver; this is the decision.

// A parsed write concern: `w` a number of members, 'majority', or the name of a tag mode
// (settings.getLastErrorModes). `j` asks for durable optimes rather than applied ones.
export interface WriteConcernDemand {
  readonly w: number | string;
  readonly j: boolean;
}


// Where each member is, by member index, this member's own position included.
export interface MemberOpTimes {
  readonly appliedOpTime: OpTime;
  readonly durableOpTime: OpTime;
}

export interface WriteConcernProblem {
  readonly code: 79 | 100;
  readonly codeName: 'UnknownReplWriteConcern' | 'UnsatisfiableWriteConcern';
  readonly errmsg: string;
}

function dataBearing(config: ReplSetConfig): number[] {
  return config.members.flatMap((m, i) => (m.arbiterOnly ? [] : [i]));
}

// Why the config can never satisfy `wc`, or null. A number above the data-bearing members, a mode
// the config does not name, or a mode asking for more distinct tag values than the members carry.
export function writeConcernProblem(config: ReplSetConfig, wc: WriteConcernDemand): WriteConcernProblem | null {
  if (wc.w === 'majority') return null;
  if (typeof wc.w === 'number') {
    return wc.w > dataBearing(config).length ? { code: 100, codeName: 'UnsatisfiableWriteConcern', errmsg: 'Not enough data-bearing nodes' } : null;
  }
  const mode = config.settings?.getLastErrorModes?.[wc.w];
  if (mode === undefined) {
    return { code: 79, codeName: 'UnknownReplWriteConcern', errmsg: `No write concern mode named '${wc.w}' found in replica set configuration` };
  }
  const everyone = dataBearing(config);
  for (const [tag, needed] of Object.entries(mode)) {
    if (distinctTagValues(config, everyone, tag) < needed) {
      return { code: 100, codeName: 'UnsatisfiableWriteConcern', errmsg: `Not enough nodes match write concern mode "${wc.w}"` };
    }
  }
  return null;
}

function distinctTagValues(config: ReplSetConfig, members: readonly number[], tag: string): number {
  const values = new Set<string>();
  for (const i of members) {
    const v = config.members[i]!.tags?.[tag];
    if (v !== undefined) values.add(v);
  }
  return values.size;
}

// Whether a write at `opTime` meets `wc` now. 'majority' is the commit point reaching it (which the
// primary computes from durable optimes of its own term); a number counts data-bearing members
// holding it; a tag mode needs, for each of its tags, that many distinct values among them.
export function writeConcernSatisfied(
  config: ReplSetConfig,
  positions: readonly MemberOpTimes[],
  lastCommittedOpTime: OpTime,
  opTime: OpTime,
  wc: WriteConcernDemand,
): boolean {
  if (wc.w === 'majority') return compareOpTime(lastCommittedOpTime, opTime) >= 0;
  const holding = dataBearing(config).filter((i) => {
    const p = positions[i];
    return p !== undefined && compareOpTime(wc.j ? p.durableOpTime : p.appliedOpTime, opTime) >= 0;
  });
  if (typeof wc.w === 'number') return holding.length >= wc.w;
  const mode = config.settings?.getLastErrorModes?.[wc.w];
  if (mode === undefined) return false;
  return Object.entries(mode).every(([tag, needed]) => distinctTagValues(config, holding, tag) >= needed);
}
