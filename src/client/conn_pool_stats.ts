import type { Doc } from '../bson/values.js';
import type { ReplicaSetMonitors } from './replica_set_monitors.js';

// connPoolStats's `replicaSets`, as mongos reports its monitors' views: per set, each member's
// address, whether it answers, whether it is the primary, hidden or a secondary, and its round trip.
export function replicaSetsStats(monitors: ReplicaSetMonitors): Doc {
  const out: Doc = {};
  for (const monitor of monitors.all()) {
    out[monitor.setName] = {
      hosts: monitor.view().map((s) => ({
        addr: s.address,
        ok: s.type !== 'Unknown',
        ismaster: s.type === 'RSPrimary',
        hidden: s.hidden,
        secondary: s.type === 'RSSecondary',
        pingTimeMillis: s.rttMs === undefined ? 0 : Math.round(s.rttMs),
        ...(Object.keys(s.tags).length > 0 ? { tags: s.tags } : {}),
      })),
    };
  }
  return out;
}
