import type { ReadPreference } from './read_preference.js';
import type { ServerDescription } from './server_description.js';

// The latency window (the spec's localThresholdMS): members this much slower than the fastest
// eligible one are left out.
export const LOCAL_THRESHOLD_MS = 15;

export interface SelectionSettings {
  // How often the monitor hears from each member: the staleness estimate's margin.
  heartbeatFrequencyMs: number;
  localThresholdMs?: number;
}

// The members of a set that may serve `rp`, the server selection spec's rules for a replica set:
// the primary for `primary`; secondaries no staler than maxStalenessSeconds, then of those the
// ones the first matching tag set selects, for `secondary` (and `nearest`, the primary among
// them); the `…Preferred` modes fall back to the other kind. The caller picks one at random.
export function selectServers(servers: readonly ServerDescription[], rp: ReadPreference, settings: SelectionSettings): ServerDescription[] {
  const primary = servers.find((s) => s.type === 'RSPrimary');
  switch (rp.mode) {
    case 'primary':
      return primary === undefined ? [] : [primary];
    case 'primaryPreferred':
      return primary !== undefined ? [primary] : eligible(servers, primary, rp, settings, false);
    case 'secondary':
      return eligible(servers, primary, rp, settings, false);
    case 'secondaryPreferred': {
      const secondaries = eligible(servers, primary, rp, settings, false);
      return secondaries.length > 0 || primary === undefined ? secondaries : [primary];
    }
    case 'nearest':
      return eligible(servers, primary, rp, settings, true);
  }
}

function eligible(servers: readonly ServerDescription[], primary: ServerDescription | undefined, rp: ReadPreference, settings: SelectionSettings, withPrimary: boolean): ServerDescription[] {
  let candidates = servers.filter((s) => s.type === 'RSSecondary' || (withPrimary && s.type === 'RSPrimary'));
  if (rp.maxStalenessSeconds !== undefined) {
    const maxMs = rp.maxStalenessSeconds * 1000;
    const freshest = servers.filter((s) => s.type === 'RSSecondary');
    candidates = candidates.filter((s) => s.type === 'RSPrimary' || stalenessMs(s, primary, freshest, settings.heartbeatFrequencyMs) <= maxMs);
  }
  candidates = byTags(candidates, rp.tags);
  return inLatencyWindow(candidates, settings.localThresholdMs ?? LOCAL_THRESHOLD_MS);
}

// The max staleness spec's estimate: behind the primary by what each last wrote as seen when last
// checked, or, with no primary, behind the secondary that wrote last; plus a heartbeat's margin.
export function stalenessMs(s: ServerDescription, primary: ServerDescription | undefined, secondaries: readonly ServerDescription[], heartbeatFrequencyMs: number): number {
  const written = s.lastWriteDateMs ?? 0;
  if (primary !== undefined) {
    return (s.lastUpdateMs - written) - (primary.lastUpdateMs - (primary.lastWriteDateMs ?? 0)) + heartbeatFrequencyMs;
  }
  const newest = Math.max(...secondaries.map((x) => x.lastWriteDateMs ?? 0));
  return newest - written + heartbeatFrequencyMs;
}

function byTags(candidates: ServerDescription[], tagSets: readonly Record<string, unknown>[] | undefined): ServerDescription[] {
  if (tagSets === undefined || tagSets.length === 0) return candidates;
  for (const set of tagSets) {
    const matching = candidates.filter((s) => Object.entries(set).every(([k, v]) => s.tags[k] === v));
    if (matching.length > 0) return matching;
  }
  return [];
}

function inLatencyWindow(candidates: ServerDescription[], thresholdMs: number): ServerDescription[] {
  if (candidates.length <= 1) return candidates;
  const fastest = Math.min(...candidates.map((s) => s.rttMs ?? 0));
  return candidates.filter((s) => (s.rttMs ?? 0) <= fastest + thresholdMs);
}
