import type { MemberState } from './member_state.js';
import { NULL_OP_TIME, type OpTime } from './op_time.js';

// What a member knows of another (MongoDB's MemberData), from heartbeat responses,
// replSetUpdatePosition and oplog query metadata.
export interface MemberData {
  // From the last successful heartbeat; null before any.
  readonly state: MemberState | null;
  readonly term: number;
  readonly appliedOpTime: OpTime;
  readonly durableOpTime: OpTime;
  readonly syncSourceIndex: number | null;
  readonly lastHeartbeatOkMs: number | null;
  // The last time the member was heard from at all (heartbeat response or position update): what
  // a primary counts to decide whether it still sees a majority.
  readonly lastUpdateMs: number | null;
  readonly pingMs: number | null;
  // The config version its last heartbeat answer reported (-1 before any): how far a config spread.
  readonly configVersion: number;
}

export const UNKNOWN_MEMBER: MemberData = {
  state: null,
  term: -1,
  appliedOpTime: NULL_OP_TIME,
  durableOpTime: NULL_OP_TIME,
  syncSourceIndex: null,
  lastHeartbeatOkMs: null,
  lastUpdateMs: null,
  pingMs: null,
  configVersion: -1,
};

// Up: answered a heartbeat within the election timeout (MongoDB marks a member DOWN after
// heartbeatTimeoutSecs without an answer; both are 10 s by default).
export function isUp(m: MemberData, nowMs: number, electionTimeoutMs: number): boolean {
  return m.lastHeartbeatOkMs !== null && nowMs - m.lastHeartbeatOkMs <= electionTimeoutMs;
}

export function replaceMember(members: readonly MemberData[], index: number, m: MemberData): readonly MemberData[] {
  return members.map((old, i) => (i === index ? m : old));
}
