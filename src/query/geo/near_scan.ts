import { s2 } from 's2js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import type { IndexAccess } from '../../storage/index_access.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import { readLocation, type Geometry } from '../../storage/geo/geometry.js';
import { eachLocation, valuesAtPath } from '../../storage/geo/geo_keys.js';
import { flatIntervals } from '../../storage/geo/flat_cells.js';
import { regionIntervals, type CellInterval } from '../../storage/geo/sphere_cells.js';
import type { Matcher } from '../match/matcher.js';
import { ALL_VALUES, intervalsFor, isPoint, normalize, type Interval } from '../plan/index_bounds.js';
import { intervalScan, type QueryPlan } from '../plan/query_planner.js';
import { fetchCandidate, type Candidate, type ExecutionStats } from '../exec/plan_executor.js';
import { degreeBox } from './geo_bounds.js';
import { distanceToGeometry } from './geo_predicates.js';
import { EARTH_RADIUS_METERS, type NearQuery } from './near_query.js';

// A $near answered from a geo index as MongoDB's GEO_NEAR stages answer it: the index is read for
// the cells of a disc around the point (a spherical cap, or a box on a 2d plane), every document
// found is fetched once and its distance measured exactly; those no farther than the disc's
// radius are certain to be all there are that near, so they are handed out in distance order,
// and the disc grows (four times wider each round) until it passes $maxDistance or covers
// everything. The index is read again for the inner cells each round; documents already
// fetched are skipped.
export interface NearSearch {
  index: IndexAccess;
  plan: QueryPlan & { kind: 'IXSCAN' };
  run(storage: StorageEngine, coll: Collection, matcher: Matcher | undefined, stats: ExecutionStats): Iterable<Candidate>;
}

type Mode = 'sphere' | 'flat';

export function planNear(coll: Collection | undefined, near: NearQuery, rest: Doc): NearSearch {
  const index = nearIndex(coll, near);
  const geo = index.geo!;
  const mode: Mode = near.geoJSON || near.op === '$nearSphere' || geo.kind === '2dsphere' ? 'sphere' : 'flat';
  // Distances are measured in radians on the sphere; GeoJSON's meters are converted at the edges.
  const scale = near.geoJSON ? EARTH_RADIUS_METERS : 1;
  const minDistance = near.minDistance / scale;
  const maxDistance = near.maxDistance / scale;
  let center: s2.Point | undefined;
  if (mode === 'sphere') {
    if (!(Math.abs(near.x) <= 180 && Math.abs(near.y) <= 90)) throw new MongoError(ErrorCodes.BadValue, `longitude/latitude is out of bounds, lng: ${near.x} lat: ${near.y}`);
    center = s2.Point.fromLatLng(s2.LatLng.fromDegrees(near.y, near.x));
  }
  const prefix = prefixIntervals(index, rest);
  const ring = (radius: number): CellInterval[] => {
    if (geo.kind === '2dsphere') return regionIntervals(s2.Cap.fromCenterAngle(center!, Math.min(radius, Math.PI)));
    if (mode === 'sphere') return flatIntervals(geo, degreeBox(near.x, near.y, radius));
    return flatIntervals(geo, { x0: near.x - radius, y0: near.y - radius, x1: near.x + radius, y1: near.y + radius });
  };
  const coversAll = (radius: number): boolean => (mode === 'sphere'
    ? radius >= Math.PI
    : near.x - radius <= geo.min && near.y - radius <= geo.min && near.x + radius >= geo.max && near.y + radius >= geo.max);
  const scanOf = (radius: number): QueryPlan & { kind: 'IXSCAN' } => {
    const cells = normalize(ring(radius).map((c): Interval => ({ low: c.low, lowInclusive: true, high: c.high, highInclusive: true })));
    const fields = Object.keys(index.keyPattern).map((f, i) => (f === geo.field ? cells : prefix[i] ?? [ALL_VALUES]));
    return intervalScan(index, fields);
  };
  const firstRadius = Math.max(minDistance, mode === 'sphere' ? 1e-4 : (geo.max - geo.min) / 4096);
  const distanceOf = (doc: Doc): { distance: number; location: unknown } | undefined => {
    let best: { distance: number; location: unknown } | undefined;
    for (const location of valuesAtPath(doc, near.field.split('.')).flatMap(eachLocation)) {
      const geometry = readLocation(location);
      if (geometry === undefined) continue;
      const distance = mode === 'sphere' ? distanceToGeometry(center!, geometry) : flatDistance(near.x, near.y, geometry);
      if (best === undefined || distance < best.distance) best = { distance, location };
    }
    return best;
  };
  const plan = { ...scanOf(firstRadius), geoNear: geo.kind };
  return {
    index,
    plan,
    *run(storage, coll, matcher, stats) {
      const seen = new Set<number>();
      let pending: { distance: number; candidate: Candidate }[] = [];
      for (let radius = firstRadius; ; radius *= 4) {
        const last = coversAll(radius) || radius >= maxDistance;
        for (const range of scanOf(radius).ranges) {
          for (const { recordId } of index.scan(storage.kv, range.start, range.end, false)) {
            stats.keysExamined += 1;
            if (seen.has(recordId)) continue;
            seen.add(recordId);
            const candidate = fetchCandidate(storage, coll, recordId, matcher, stats);
            if (candidate === undefined) continue;
            const found = distanceOf(candidate.doc);
            if (found === undefined || found.distance < minDistance || found.distance > maxDistance) continue;
            candidate.geoDistance = found.distance * scale;
            candidate.geoPoint = found.location;
            pending.push({ distance: found.distance, candidate });
          }
        }
        pending.sort((a, b) => a.distance - b.distance || a.candidate.recordId - b.candidate.recordId);
        const ready = last ? pending.length : pending.findIndex((p) => p.distance > radius);
        const count = ready === -1 ? pending.length : ready;
        for (let i = 0; i < count; i++) yield pending[i]!.candidate;
        pending = pending.slice(count);
        if (last) return;
      }
    },
  };
}

// The plane holds legacy pairs only.
function flatDistance(x: number, y: number, geometry: Geometry): number {
  let best = Infinity;
  for (const part of geometry.parts) if (part.kind === 'point' && part.legacy) best = Math.min(best, Math.hypot(part.x - x, part.y - y));
  return best;
}

// GeoJSON needs a 2dsphere index; a legacy pair reads a 2d index first for $near and a 2dsphere
// one first for $nearSphere. Without one, MongoDB's planner finds no plan.
function nearIndex(coll: Collection | undefined, near: NearQuery): IndexAccess {
  const on = (coll?.indexes ?? []).filter((i) => i.geo?.field === near.field && !i.hidden);
  const sphere = on.find((i) => i.geo!.kind === '2dsphere');
  const flat = on.find((i) => i.geo!.kind === '2d');
  const index = near.geoJSON ? sphere : near.op === '$near' ? flat ?? sphere : sphere ?? flat;
  if (index === undefined) throw new MongoError(ErrorCodes.NoQueryExecutionPlans, 'error processing query: planner returned error :: caused by :: unable to find index for $geoNear query');
  return index;
}

// Equality on the fields before the geo field narrows each ring's scan to those values.
function prefixIntervals(index: IndexAccess, rest: Doc): (Interval[] | undefined)[] {
  const out: (Interval[] | undefined)[] = [];
  for (const field of Object.keys(index.keyPattern)) {
    if (field === index.geo!.field) break;
    const intervals = rest[field] === undefined ? undefined : intervalsFor(rest[field], index.entry.multikey);
    if (intervals === undefined || !intervals.every(isPoint)) break;
    out.push(intervals);
  }
  return out;
}
