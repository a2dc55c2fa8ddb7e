import { s2 } from 's2js';
import { formatValue } from '../../bson/format.js';
import { isNumber, isPlainObject, toDouble } from '../../bson/values.js';
import { loopCrossing } from './loop_validity.js';

// A value read as a location, the way MongoDB's geoparser reads one: a GeoJSON object (Point,
// LineString, Polygon, their Multi- forms, GeometryCollection) or a legacy coordinate pair
// ([x, y] or {any: x, other: y}). Spherical parts are s2js objects; a legacy pair keeps its
// plane coordinates too, which $box, $polygon, $center and 2d indexes read.
export interface GeoPoint {
  kind: 'point';
  x: number;
  y: number;
  legacy: boolean;
  // Absent for a legacy pair outside longitude/latitude bounds (a 2d index may take it).
  sphere: s2.Point | undefined;
}

export interface GeoLine {
  kind: 'line';
  vertices: s2.Point[];
}

export interface GeoPolygon {
  kind: 'polygon';
  polygon: s2.Polygon;
  // Each ring's distinct vertices, for edge tests.
  rings: s2.Point[][];
}

export type GeoPart = GeoPoint | GeoLine | GeoPolygon;

export interface Geometry {
  parts: GeoPart[];
}

// Thrown with MongoDB's reason; the caller frames it (16755 on insert, BadValue in a query).
export class GeoParseError extends Error {}

function fail(message: string): never {
  throw new GeoParseError(message);
}

export function isGeoJSONObject(value: unknown): boolean {
  return isPlainObject(value) && typeof value.type === 'string';
}

// A legacy pair: an array or object whose first two values are numbers.
export function legacyPair(value: unknown): [number, number] | undefined {
  const values = Array.isArray(value) ? value : isPlainObject(value) && !('type' in value) ? Object.values(value) : undefined;
  if (values === undefined || values.length < 2 || !isNumber(values[0]) || !isNumber(values[1])) return undefined;
  return [toDouble(values[0]), toDouble(values[1])];
}

export function legacyPoint(x: number, y: number): GeoPoint {
  const inBounds = Math.abs(x) <= 180 && Math.abs(y) <= 90;
  return { kind: 'point', x, y, legacy: true, sphere: inBounds ? s2.Point.fromLatLng(s2.LatLng.fromDegrees(y, x)) : undefined };
}

// A location as a document holds it, or undefined when the value is no location at all.
export function parseLocation(value: unknown): Geometry | undefined {
  if (isGeoJSONObject(value)) return parseGeoJSON(value);
  const pair = legacyPair(value);
  return pair === undefined ? undefined : { parts: [legacyPoint(pair[0], pair[1])] };
}

// The same for a query's match: a value that is not a valid location matches no geo predicate.
export function readLocation(value: unknown): Geometry | undefined {
  try {
    return parseLocation(value);
  } catch (e) {
    if (e instanceof GeoParseError) return undefined;
    throw e;
  }
}

export function parseGeoJSON(value: unknown): Geometry {
  if (!isPlainObject(value) || typeof value.type !== 'string') fail(`unknown GeoJSON type: ${formatValue(value)}`);
  const { type } = value;
  if (type === 'GeometryCollection') {
    if (!Array.isArray(value.geometries)) fail('GeometryCollection geometries must be an array');
    const parts = value.geometries.flatMap((g) => {
      if (!isPlainObject(g) || g.type === 'GeometryCollection') fail(`Element of GeometryCollection is not a GeoJSON geometry: ${formatValue(g)}`);
      return parseGeoJSON(g).parts;
    });
    if (parts.length === 0) fail('GeometryCollection has no geometries');
    return { parts };
  }
  const coords = value.coordinates;
  if (!Array.isArray(coords)) fail(`GeoJSON coordinates must be an array, instead got type ${typeof coords}`);
  switch (type) {
    case 'Point': return { parts: [pointOf(coords)] };
    case 'LineString': return { parts: [lineOf(coords)] };
    case 'Polygon': return { parts: [polygonOf(coords)] };
    case 'MultiPoint': return { parts: many(coords, 'MultiPoint', pointOf) };
    case 'MultiLineString': return { parts: many(coords, 'MultiLineString', lineOf) };
    case 'MultiPolygon': return { parts: many(coords, 'MultiPolygon', polygonOf) };
    default: return fail(`unknown GeoJSON type: ${formatValue(value)}`);
  }
}

function many<T>(coords: unknown[], type: string, parse: (c: unknown) => T): T[] {
  if (coords.length === 0) fail(`${type} coordinates must have at least 1 element`);
  return coords.map(parse);
}

function pointOf(coords: unknown): GeoPoint {
  if (!Array.isArray(coords)) fail('GeoJSON coordinates must be an array');
  if (coords.length !== 2 || !coords.every(isNumber)) fail(`Point must only contain numeric elements and exactly two of them: ${formatValue(coords)}`);
  const [x, y] = coords.map(toDouble) as [number, number];
  if (!(Math.abs(x) <= 180 && Math.abs(y) <= 90)) fail(`longitude/latitude is out of bounds, lng: ${x} lat: ${y}`);
  return { kind: 'point', x, y, legacy: false, sphere: s2.Point.fromLatLng(s2.LatLng.fromDegrees(y, x)) };
}

function lineOf(coords: unknown): GeoLine {
  if (!Array.isArray(coords)) fail('GeoJSON coordinates must be an array');
  const vertices = dedupe(coords.map((c) => pointOf(c).sphere!));
  if (vertices.length < 2) fail(`GeoJSON LineString must have at least 2 vertices: ${formatValue(coords)}`);
  return { kind: 'line', vertices };
}

function polygonOf(coords: unknown): GeoPolygon {
  if (!Array.isArray(coords) || coords.length === 0) fail('Polygon coordinates must be an array of at least one ring');
  const rings = coords.map((ring) => ringOf(ring));
  const loops = rings.map((ring) => {
    const loop = new s2.Loop(ring);
    // A GeoJSON polygon is the smaller region its ring bounds, whichever way the ring turns.
    loop.normalize();
    return loop;
  });
  for (let i = 1; i < loops.length; i++) {
    if (!loops[0]!.contains(loops[i]!)) fail('Secondary loops not contained by first exterior loop - secondary loops must be holes');
  }
  return { kind: 'polygon', polygon: new s2.Polygon(loops), rings };
}

function ringOf(ring: unknown): s2.Point[] {
  if (!Array.isArray(ring)) fail('Polygon coordinates must be an array');
  const shown = formatValue(ring);
  if (ring.length < 4) fail(`Loop must have at least 3 different vertices: ${shown}`);
  const points = ring.map((c) => pointOf(c));
  const first = points[0]!;
  const last = points[points.length - 1]!;
  if (first.x !== last.x || first.y !== last.y) fail(`Loop is not closed, first vertex does not equal last vertex: ${shown}`);
  const vertices = dedupe(points.slice(0, -1).map((p) => p.sphere!));
  // The ring wraps around: a last vertex equal to the first is the same vertex.
  while (vertices.length > 1 && vertices[vertices.length - 1]!.equals(vertices[0]!)) vertices.pop();
  if (vertices.length < 3) fail(`Loop must have at least 3 different vertices: ${shown}`);
  const crossing = loopCrossing(vertices);
  if (crossing !== undefined) fail(`Loop is not valid: ${shown} Edges ${crossing[0]} and ${crossing[1]} cross`);
  return vertices;
}

// Repeated consecutive vertices are one vertex, as MongoDB's parser makes them.
function dedupe(points: s2.Point[]): s2.Point[] {
  return points.filter((p, i) => i === 0 || !p.equals(points[i - 1]!));
}
