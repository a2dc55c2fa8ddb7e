import { s2 } from 's2js';
import { isPlainObject } from '../../bson/values.js';
import type { IndexAccess } from '../../storage/index_access.js';
import type { GeoIndexSpec } from '../../storage/geo/geo_index_spec.js';
import { flatIntervals, type FlatBox } from '../../storage/geo/flat_cells.js';
import { regionIntervals, type CellInterval } from '../../storage/geo/sphere_cells.js';
import { normalize, type Interval } from '../plan/index_bounds.js';
import { parseGeoQuery, type GeoQueryRegion } from './geo_region.js';

// The key intervals of a geo index's geo field that hold every document a $geoWithin or
// $geoIntersects can match: a 2dsphere index's cells meeting the region, a 2d index's grid cells
// meeting its bounding box. Undefined when the index cannot answer the shape (a 2dsphere index
// and the plane's $box, $polygon and $center; a 2d index and GeoJSON), or the condition holds no
// geo operator. The fetched documents are then checked against the exact shape.
export function geoIntervals(index: IndexAccess, condition: unknown): Interval[] | undefined {
  const geo = index.geo!;
  if (!isPlainObject(condition)) return undefined;
  for (const op of ['$geoWithin', '$within', '$geoIntersects'] as const) {
    if (condition[op] === undefined) continue;
    const region = parseGeoQuery(op, condition[op]).region;
    const cells = geo.kind === '2dsphere' ? sphereCells(region) : flatCells(geo, region);
    return cells === undefined ? undefined : normalize(cells.map(toInterval));
  }
  return undefined;
}

function toInterval(c: CellInterval): Interval {
  return { low: c.low, lowInclusive: true, high: c.high, highInclusive: true };
}

function sphereCells(region: GeoQueryRegion): CellInterval[] | undefined {
  switch (region.kind) {
    case 'cap': return regionIntervals(region.cap);
    case 'polygons': case 'intersects': {
      return region.geometry.parts.flatMap((part) => {
        if (part.kind === 'point') return regionIntervals(s2.Cap.fromPoint(part.sphere!), true);
        if (part.kind === 'line') return regionIntervals(new s2.Polyline(part.vertices), true);
        return regionIntervals(part.polygon, true);
      });
    }
    default: return undefined;
  }
}

function flatCells(geo: GeoIndexSpec, region: GeoQueryRegion): CellInterval[] | undefined {
  const box = flatBox(region);
  return box === undefined ? undefined : flatIntervals(geo, box);
}

function flatBox(region: GeoQueryRegion): FlatBox | undefined {
  switch (region.kind) {
    case 'box': return region;
    case 'circle': return { x0: region.x - region.radius, y0: region.y - region.radius, x1: region.x + region.radius, y1: region.y + region.radius };
    case 'flatPolygon': {
      const xs = region.points.map((p) => p[0]);
      const ys = region.points.map((p) => p[1]);
      return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
    }
    case 'cap': return degreeBox(region.x, region.y, region.radius);
    default: return undefined;
  }
}

// The longitude/latitude box around a spherical cap of `radius` radians (all longitudes where the
// cap reaches a pole or a degree of longitude is too short to bound).
export function degreeBox(x: number, y: number, radius: number): FlatBox {
  const dLat = (radius * 180) / Math.PI;
  const y0 = Math.max(-90, y - dLat);
  const y1 = Math.min(90, y + dLat);
  const polar = Math.max(Math.abs(y0), Math.abs(y1));
  if (polar >= 89.999 || radius >= Math.PI / 2) return { x0: -180, y0, x1: 180, y1 };
  const dLng = dLat / Math.cos((polar * Math.PI) / 180);
  // The plane of a 2d index does not wrap at the antimeridian: a cap across it takes every longitude.
  if (x - dLng < -180 || x + dLng > 180) return { x0: -180, y0, x1: 180, y1 };
  return { x0: x - dLng, y0, x1: x + dLng, y1 };
}
