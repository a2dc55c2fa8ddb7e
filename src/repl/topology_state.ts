import type { LastVote } from './last_vote.js';
import { isUp, type MemberData } from './member_data.js';
import type { MemberState } from './member_state.js';
import { entryOpTime, type OplogEntry } from './oplog_entry.js';
import { NULL_OP_TIME, type OpTime } from './op_time.js';
import { replSetSettings, type ReplSetConfig } from './repl_set_config.js';
import type { ReplTestingKnobs } from './repl_testing_knobs.js';

// MongoDB's TopologyCoordinator roles: a leader is PRIMARY, a candidate is a SECONDARY running an
// election, everyone else follows.
export type Role = 'follower' | 'candidate' | 'leader';

export type StartElectionReason = 'electionTimeout' | 'priorityTakeover' | 'catchupTakeover' | 'stepUpRequest';

// One round of replSetRequestVotes (the dry run, then the real one).
export interface ElectionRound {
  readonly reason: StartElectionReason;
  readonly dryRun: boolean;
  readonly term: number;
  readonly granted: readonly number[];
  readonly responded: readonly number[];
  readonly deadlineMs: number;
  // A catch-up takeover's dry run needs the primary's own yes (it must agree it is behind).
  readonly requiredVoter: number | null;
}

export interface CatchUp {
  readonly deadlineMs: number;
  // The freshest optime among the members heard from since the win, once a majority answered.
  readonly targetOpTime: OpTime | null;
  readonly heardFrom: readonly number[];
}

export interface LeaderState {
  // Catching up, then writing the "new primary" no-op: until then no client write is accepted.
  readonly writable: boolean;
  readonly catchUp: CatchUp | null;
  // The no-op's optime: nothing before it counts toward this primary's commit point.
  readonly firstOpTimeOfMyTerm: OpTime | null;
}

export interface FetchState {
  readonly syncSourceIndex: number | null;
  readonly inFlight: { readonly kind: 'oplogFetch' | 'rollbackFetch'; readonly sentAtMs: number } | null;
  readonly nextFetchAtMs: number;
  // Sources not to choose again before the time given (by member index): one that sent a malformed
  // batch, or with which a rollback found no common point.
  readonly denylist: Readonly<Record<number, number>>;
  // replSetSyncFrom's member: the next source chosen, once, if it is up and readable.
  readonly requestedSourceIndex: number | null;
}

// Everything one member's protocol knows. `oplog` stands for the member's local.oplog.rs, so the
// core can answer oplog queries and find a rollback's common point; the driver that wires the core
// to storage will give it a read view instead.
export interface TopologyState {
  readonly config: ReplSetConfig;
  readonly selfIndex: number;
  readonly knobs: ReplTestingKnobs;
  readonly nowMs: number;
  // The timestamp the node's logical clock would issue next (the driver gives it with each event):
  // a new entry's ts is at least this, so the oplog's timestamps are the node's cluster times.
  readonly clockTs: number;
  readonly role: Role;
  readonly memberState: MemberState;
  readonly term: number;
  readonly lastVote: LastVote;
  readonly oplog: readonly OplogEntry[];
  readonly lastCommittedOpTime: OpTime;
  // By member index; the entry at selfIndex is not used.
  readonly members: readonly MemberData[];
  readonly nextHeartbeatAtMs: number;
  readonly electionTimeoutAtMs: number | null;
  readonly priorityTakeoverAtMs: number | null;
  readonly catchupTakeoverAtMs: number | null;
  readonly election: ElectionRound | null;
  // replSetFreeze and replSetStepDown: no standing for election before this time.
  readonly frozenUntilMs: number;
  readonly leader: LeaderState | null;
  readonly fetch: FetchState;
  readonly rngState: number;
}

export function lastAppliedOpTime(s: TopologyState): OpTime {
  const last = s.oplog[s.oplog.length - 1];
  return last === undefined ? NULL_OP_TIME : entryOpTime(last);
}

export function selfConfig(s: TopologyState): ReplSetConfig['members'][number] {
  return s.config.members[s.selfIndex]!;
}

export function otherMembers(s: TopologyState): number[] {
  return s.config.members.map((_, i) => i).filter((i) => i !== s.selfIndex);
}

// The primary this member knows of: itself, or a member up and PRIMARY in a term not behind its own.
export function primaryIndex(s: TopologyState): number | null {
  if (s.role === 'leader') return s.selfIndex;
  const timeoutMs = replSetSettings(s.config).electionTimeoutMillis;
  const i = s.members.findIndex((m, j) => j !== s.selfIndex && m.state === 'PRIMARY' && m.term >= s.term && isUp(m, s.nowMs, timeoutMs));
  return i < 0 ? null : i;
}
