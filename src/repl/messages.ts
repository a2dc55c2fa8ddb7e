import type { MemberState } from './member_state.js';
import type { OpTime } from './op_time.js';
import type { OplogEntry } from './oplog_entry.js';

// What members say to each other. The names are MongoDB's commands; fields carry what the protocol
// decides on, not every field of MongoDB's replies. `sentAtMs` is echoed back so the sender
// measures its ping to the member without keeping the request.
export interface ReplSetHeartbeat {
  readonly kind: 'replSetHeartbeat';
  readonly setName: string;
  readonly term: number;
  readonly configVersion: number;
  readonly sentAtMs: number;
}

export interface ReplSetHeartbeatResponse {
  readonly kind: 'replSetHeartbeatResponse';
  readonly setName: string;
  readonly term: number;
  readonly state: MemberState;
  readonly appliedOpTime: OpTime;
  readonly durableOpTime: OpTime;
  readonly configVersion: number;
  readonly syncSourceIndex: number | null;
  // The ReplSetMetadata a response carries: the member's commit point.
  readonly lastOpCommitted: OpTime;
  readonly sentAtMs: number;
}

export interface ReplSetRequestVotes {
  readonly kind: 'replSetRequestVotes';
  readonly setName: string;
  readonly dryRun: boolean;
  // A dry run is asked in the candidate's current term, a real election in the next one.
  readonly term: number;
  readonly candidateIndex: number;
  readonly configVersion: number;
  readonly lastAppliedOpTime: OpTime;
}

export interface ReplSetRequestVotesResponse {
  readonly kind: 'replSetRequestVotesResponse';
  readonly term: number;
  readonly voteGranted: boolean;
  readonly reason: string;
  // Which round this answers: a late answer to an earlier round is not counted in a later one.
  readonly dryRun: boolean;
  readonly requestTerm: number;
}

export interface MemberPosition {
  readonly memberIndex: number;
  readonly appliedOpTime: OpTime;
  readonly durableOpTime: OpTime;
}

// Sent to the sync source (which forwards upstream) after each batch and as a keepalive.
export interface ReplSetUpdatePosition {
  readonly kind: 'replSetUpdatePosition';
  readonly term: number;
  readonly configVersion: number;
  readonly optimes: readonly MemberPosition[];
}

// The oplog fetcher's find/getMore on local.oplog.rs from `lastFetched` (inclusive: the source
// must still hold it, or the fetcher's history and the source's have diverged).
export interface OplogFetch {
  readonly kind: 'oplogFetch';
  readonly lastFetched: OpTime;
  readonly term: number;
}

// The metadata MongoDB attaches to oplog query replies (ReplSetMetadata and OplogQueryMetadata).
export interface SourceMetadata {
  readonly term: number;
  readonly lastOpCommitted: OpTime;
  readonly lastOpApplied: OpTime;
  readonly isPrimary: boolean;
}

export interface OplogFetchResponse {
  readonly kind: 'oplogFetchResponse';
  // 'OplogStartMissing': the source has no entry at `lastFetched`: our histories diverged, or its
  // oplog no longer reaches back to it (`oldestOpTime` says which).
  readonly status: 'ok' | 'OplogStartMissing';
  readonly entries: readonly OplogEntry[];
  readonly metadata: SourceMetadata;
  // The source's oldest entry (null: its oplog is empty), given with OplogStartMissing: a capped
  // or freshly initial-synced oplog begins after entries the fetcher may still need.
  readonly oldestOpTime?: OpTime | null;
}

// Rollback reads the source's oplog back to the fetcher's commit point to find the common point.
export interface RollbackFetch {
  readonly kind: 'rollbackFetch';
  readonly from: OpTime;
}

export interface RollbackFetchResponse {
  readonly kind: 'rollbackFetchResponse';
  readonly entries: readonly OplogEntry[];
  readonly metadata: SourceMetadata;
  // As OplogFetchResponse's, given when the entries do not begin at the requested optime.
  readonly oldestOpTime?: OpTime | null;
}

export type ReplMessage =
  | ReplSetHeartbeat
  | ReplSetHeartbeatResponse
  | ReplSetRequestVotes
  | ReplSetRequestVotesResponse
  | ReplSetUpdatePosition
  | OplogFetch
  | OplogFetchResponse
  | RollbackFetch
  | RollbackFetchResponse;
