import { replSetSettings } from './repl_set_config.js';
import type { Effects } from './effects.js';
import { reportPositionUpstream } from './positions.js';
import { otherMembers, type TopologyState } from './topology_state.js';

// Every heartbeatIntervalMillis a member sends replSetHeartbeat to every other member; a follower
// also reports its position upstream then, as MongoDB's reporter keeps its sync source informed.
export function sendHeartbeats(s: TopologyState, fx: Effects): TopologyState {
  for (const to of otherMembers(s)) {
    fx.send(to, { kind: 'replSetHeartbeat', setName: s.config._id, term: s.term, configVersion: s.config.version, sentAtMs: s.nowMs });
  }
  reportPositionUpstream(s, fx);
  return { ...s, nextHeartbeatAtMs: s.nowMs + replSetSettings(s.config).heartbeatIntervalMillis };
}
