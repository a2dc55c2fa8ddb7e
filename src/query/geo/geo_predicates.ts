import type { s2 } from 's2js';
import { edgesCross } from '../../storage/geo/loop_validity.js';
import type { GeoLine, GeoPart, GeoPolygon, Geometry } from '../../storage/geo/geometry.js';
import type { GeoRegion } from './geo_region.js';

// The exact tests behind $geoWithin, $geoIntersects and distances, on s2js's objects where it has
// the test (polygon containment and intersection, caps) and on its points' vectors where it has
// none that fits (lines against polygons and lines, point-to-edge distance): those are written
// here, as S2's own algorithms would answer them.

// A point this close (radians, about 6 mm on the earth) to a line is on it.
const ON_EDGE = 1e-9;

export function withinRegion(geometry: Geometry, region: GeoRegion): boolean {
  return geometry.parts.every((part) => partWithin(part, region));
}

function partWithin(part: GeoPart, region: GeoRegion): boolean {
  switch (region.kind) {
    case 'box': case 'flatPolygon': case 'circle':
      return part.kind === 'point' && part.legacy && flatWithin(part.x, part.y, region);
    case 'cap': {
      if (part.kind === 'point') return part.sphere !== undefined && region.cap.containsPoint(part.sphere);
      const vertices = part.kind === 'line' ? part.vertices : part.rings[0]!;
      return vertices.every((v) => region.cap.containsPoint(v));
    }
    case 'polygons':
      return region.geometry.parts.some((p) => sphereWithin(part, p as GeoPolygon));
  }
}

function sphereWithin(part: GeoPart, container: GeoPolygon): boolean {
  if (part.kind === 'point') return part.sphere !== undefined && container.polygon.containsPoint(part.sphere);
  if (part.kind === 'polygon') return container.polygon.contains(part.polygon);
  return part.vertices.every((v) => container.polygon.containsPoint(v)) && !lineCrossesPolygon(part, container);
}

function flatWithin(x: number, y: number, region: GeoRegion): boolean {
  if (region.kind === 'box') return x >= region.x0 && x <= region.x1 && y >= region.y0 && y <= region.y1;
  if (region.kind === 'circle') return Math.hypot(x - region.x, y - region.y) <= region.radius;
  if (region.kind !== 'flatPolygon') return false;
  return inFlatPolygon(x, y, region.points);
}

// Points on the polygon's border are inside, as MongoDB's $polygon counts them.
function inFlatPolygon(x: number, y: number, points: readonly [number, number][]): boolean {
  let inside = false;
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
    const [xi, yi] = points[i]!;
    const [xj, yj] = points[j]!;
    const cross = (xj - xi) * (y - yi) - (yj - yi) * (x - xi);
    if (cross === 0 && x >= Math.min(xi, xj) && x <= Math.max(xi, xj) && y >= Math.min(yi, yj) && y <= Math.max(yi, yj)) return true;
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

export function intersectsGeometry(geometry: Geometry, query: Geometry): boolean {
  return geometry.parts.some((a) => query.parts.some((b) => partsIntersect(a, b)));
}

function partsIntersect(a: GeoPart, b: GeoPart): boolean {
  if (a.kind === 'point') {
    if (a.sphere === undefined) return false;
    return distanceToPart(a.sphere, b) <= ON_EDGE;
  }
  if (b.kind === 'point') return partsIntersect(b, a);
  if (a.kind === 'polygon' && b.kind === 'polygon') return a.polygon.intersects(b.polygon);
  if (a.kind === 'line' && b.kind === 'line') {
    return edgesOf(a.vertices, false).some(([p, q]) => edgesOf(b.vertices, false).some(([r, s]) => edgesCross(p, q, r, s)))
      || a.vertices.some((v) => distanceToLine(v, b.vertices) <= ON_EDGE) || b.vertices.some((v) => distanceToLine(v, a.vertices) <= ON_EDGE);
  }
  const [line, polygon] = (a.kind === 'line' ? [a, b] : [b, a]) as [GeoLine, GeoPolygon];
  return line.vertices.some((v) => polygon.polygon.containsPoint(v)) || lineCrossesPolygon(line, polygon)
    || polygon.rings.some((ring) => ring.some((v) => distanceToLine(v, line.vertices) <= ON_EDGE));
}

function lineCrossesPolygon(line: GeoLine, polygon: GeoPolygon): boolean {
  const ringEdges = polygon.rings.flatMap((ring) => edgesOf(ring, true));
  return edgesOf(line.vertices, false).some(([p, q]) => ringEdges.some(([r, s]) => edgesCross(p, q, r, s)));
}

function edgesOf(vertices: readonly s2.Point[], closed: boolean): [s2.Point, s2.Point][] {
  const out: [s2.Point, s2.Point][] = [];
  const n = vertices.length;
  for (let i = 0; i < (closed ? n : n - 1); i++) out.push([vertices[i]!, vertices[(i + 1) % n]!]);
  return out;
}

// Radians from a point to the nearest point of a part (0 inside a polygon).
export function distanceToPart(p: s2.Point, part: GeoPart): number {
  if (part.kind === 'point') return part.sphere === undefined ? Infinity : p.distance(part.sphere);
  if (part.kind === 'line') return distanceToLine(p, part.vertices);
  if (part.polygon.containsPoint(p)) return 0;
  return Math.min(...part.rings.map((ring) => Math.min(...edgesOf(ring, true).map(([a, b]) => distanceToEdge(p, a, b)))));
}

function distanceToLine(p: s2.Point, vertices: readonly s2.Point[]): number {
  return Math.min(...edgesOf(vertices, false).map(([a, b]) => distanceToEdge(p, a, b)));
}

// The arc AB's nearest point to P is P's projection onto AB's great circle when that falls
// between A and B, else the nearer end.
function distanceToEdge(p: s2.Point, a: s2.Point, b: s2.Point): number {
  const n = a.vector.cross(b.vector);
  const norm = n.norm();
  if (norm > 0) {
    const unit = n.mul(1 / norm);
    const projected = p.vector.sub(unit.mul(p.vector.dot(unit)));
    const beyondA = a.vector.cross(projected).dot(n) >= 0;
    const beforeB = projected.cross(b.vector).dot(n) >= 0;
    if (beyondA && beforeB && projected.norm() > 0) return Math.asin(Math.min(1, Math.abs(p.vector.dot(unit))));
  }
  return Math.min(p.distance(a), p.distance(b));
}

// Radians from a point to a geometry: its nearest part.
export function distanceToGeometry(p: s2.Point, geometry: Geometry): number {
  return Math.min(...geometry.parts.map((part) => distanceToPart(p, part)));
}
