import { nextRandom } from './random.js';
import { ELECTION_TIMEOUT_OFFSET_LIMIT_FRACTION, isElectable, replSetSettings, voterCount } from './repl_set_config.js';
import { selfConfig, type TopologyState } from './topology_state.js';

// Draws the next number of the member's seeded source.
export function drawRandom(s: TopologyState): { readonly value: number; readonly state: TopologyState } {
  const r = nextRandom(s.rngState);
  return { value: r.value, state: { ...s, rngState: r.state } };
}

// The election timeout plus up to 15% of it at random.
export function randomizedElectionOffsetMs(electionTimeoutMs: number, random01: number): number {
  return Math.floor(random01 * electionTimeoutMs * ELECTION_TIMEOUT_OFFSET_LIMIT_FRACTION);
}

// Arms (or re-arms) the election timer of a follower that could stand; a member that never stands
// has none. The only voter of its set stands at once: there is no one to wait for (MongoDB's
// single-node set elects itself as soon as its config is installed).
export function rescheduleElectionTimeout(s: TopologyState): TopologyState {
  if (s.role !== 'follower' || !isElectable(selfConfig(s))) return { ...s, electionTimeoutAtMs: null };
  if (voterCount(s.config) === 1) return { ...s, electionTimeoutAtMs: s.nowMs };
  const r = drawRandom(s);
  const timeoutMs = replSetSettings(s.config).electionTimeoutMillis;
  return { ...r.state, electionTimeoutAtMs: s.nowMs + timeoutMs + randomizedElectionOffsetMs(timeoutMs, r.value) };
}
