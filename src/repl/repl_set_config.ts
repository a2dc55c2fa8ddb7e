import { OPTIME_TS_PER_SECOND } from './op_time.js';

// The parts of a replica set config (replSetGetConfig's document) the protocol reads. Members are
// named by their index in `members`, as MongoDB's candidateIndex and memberIndex are.
export interface MemberConfig {
  readonly _id: number;
  readonly host: string;
  readonly priority: number;
  readonly votes: 0 | 1;
  readonly arbiterOnly: boolean;
  readonly hidden: boolean;
  // What write concern tag modes count (settings.getLastErrorModes).
  readonly tags?: Readonly<Record<string, string>>;
}

export interface ReplSetSettings {
  readonly heartbeatIntervalMillis: number;
  readonly electionTimeoutMillis: number;
  // -1 is MongoDB's unbounded catch-up; docshard bounds it by default (a new primary that waits
  // for a member that never answers never accepts writes).
  readonly catchUpTimeoutMillis: number;
  readonly catchUpTakeoverDelayMillis: number;
  readonly chainingAllowed: boolean;
}

export interface ReplSetConfig {
  readonly _id: string;
  readonly version: number;
  readonly members: readonly MemberConfig[];
  // What a config leaves out takes MongoDB's default (docshard's, for catch-up).
  readonly settings?: Partial<ReplSetSettings> & { readonly getLastErrorModes?: Readonly<Record<string, Readonly<Record<string, number>>>> };
}

const DEFAULT_SETTINGS: ReplSetSettings = {
  heartbeatIntervalMillis: 2000,
  electionTimeoutMillis: 10_000,
  catchUpTimeoutMillis: 2000,
  catchUpTakeoverDelayMillis: 30_000,
  chainingAllowed: true,
};

export function replSetSettings(config: ReplSetConfig): ReplSetSettings {
  return { ...DEFAULT_SETTINGS, ...config.settings };
}

// MongoDB's electionTimeoutOffsetLimitFraction: the election timer fires up to 15% late, at random,
// so that members whose primary vanished do not all stand at once.
export const ELECTION_TIMEOUT_OFFSET_LIMIT_FRACTION = 0.15;

// priorityTakeoverFreshnessWindowSeconds (2 s of optime distance): a member stands for a priority
// takeover only when its last applied entry is this close to the primary's.
export const PRIORITY_TAKEOVER_FRESHNESS_WINDOW_TS = 2 * OPTIME_TS_PER_SECOND;

// maxSyncSourceLagSecs (30 s of optime distance): a sync source this far behind the freshest member
// is not chosen first, and is left for a fresher one.
export const MAX_SYNC_SOURCE_LAG_TS = 30 * OPTIME_TS_PER_SECOND;

export function isVoter(m: MemberConfig): boolean {
  return m.votes > 0;
}

// Only these ever stand for election: priority 0, non-voting members and arbiters never do.
export function isElectable(m: MemberConfig): boolean {
  return m.priority > 0 && m.votes > 0 && !m.arbiterOnly;
}

export function voterCount(config: ReplSetConfig): number {
  return config.members.filter(isVoter).length;
}

// Votes needed to win an election, and voters that must be seen for a primary to stay primary.
export function majorityVoteCount(config: ReplSetConfig): number {
  return Math.floor(voterCount(config) / 2) + 1;
}

// How many data-bearing voters make a write majority-committed: a majority of voters, but never
// more than the voters that hold data (arbiters hold none).
export function writeMajorityCount(config: ReplSetConfig): number {
  const dataVoters = config.members.filter((m) => isVoter(m) && !m.arbiterOnly).length;
  return Math.min(majorityVoteCount(config), dataVoters);
}

// A higher-priority member waits one election timeout per member whose priority is above its own,
// plus one, so the highest-priority member stands first.
export function priorityTakeoverDelayMs(config: ReplSetConfig, memberIndex: number): number {
  const priority = config.members[memberIndex]!.priority;
  const rank = config.members.filter((m) => m.priority > priority).length;
  return (rank + 1) * replSetSettings(config).electionTimeoutMillis;
}
