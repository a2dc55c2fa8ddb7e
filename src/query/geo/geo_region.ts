import { s2 } from 's2js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { formatValue } from '../../bson/format.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { GeoParseError, legacyPair, parseGeoJSON, type Geometry } from '../../storage/geo/geometry.js';

// What a $geoWithin or $geoIntersects asks, as MongoDB's GeoExpression: a region on the sphere
// (a GeoJSON polygon or multi-polygon, or $centerSphere's cap) or on the plane of legacy pairs
// ($box, $polygon, $center), or for $geoIntersects any GeoJSON geometry.
export type GeoRegion =
  | { kind: 'polygons'; geometry: Geometry }
  | { kind: 'cap'; cap: s2.Cap; x: number; y: number; radius: number }
  | { kind: 'box'; x0: number; y0: number; x1: number; y1: number }
  | { kind: 'flatPolygon'; points: [number, number][] }
  | { kind: 'circle'; x: number; y: number; radius: number };

// $geoIntersects: any geometry; $geoWithin: a region.
export type GeoQueryRegion = GeoRegion | { kind: 'intersects'; geometry: Geometry };

export interface GeoQuery {
  op: '$geoWithin' | '$geoIntersects';
  region: GeoQueryRegion;
}

function badValue(message: string): never {
  throw new MongoError(ErrorCodes.BadValue, message);
}

// GeoJSON a query gives is read as a document's is; a reason it cannot be read is a BadValue.
export function queryGeoJSON(value: unknown): Geometry {
  try {
    return parseGeoJSON(value);
  } catch (e) {
    if (e instanceof GeoParseError) badValue(e.message);
    throw e;
  }
}

// $geometry's crs names a "big" polygon (one that may cover more than a hemisphere, its ring's
// winding deciding its inside), which docshard does not have.
function checkCrs(geometry: Doc): void {
  if (geometry.crs !== undefined) throw new MongoError(ErrorCodes.NotImplemented, `custom crs (big polygons) is not supported by docshard: ${formatValue(geometry.crs)}`);
}

export function parseGeoQuery(op: '$geoWithin' | '$geoIntersects' | '$within', arg: unknown): GeoQuery {
  if (!isPlainObject(arg)) badValue(`${op} operator requires an object, found ${formatValue(arg)}`);
  const keys = Object.keys(arg);
  if (keys.length !== 1) badValue(`${op} expects exactly one shape, found ${formatValue(arg)}`);
  const shape = keys[0]!;
  const value = arg[shape];
  if (op === '$geoIntersects') {
    if (shape !== '$geometry' || !isPlainObject(value)) badValue(`$geoIntersects not supported with provided geometry: ${formatValue(arg)}`);
    checkCrs(value);
    return { op, region: { kind: 'intersects', geometry: queryGeoJSON(value) } };
  }
  return { op: '$geoWithin', region: parseWithinShape(shape, value, arg) };
}

function parseWithinShape(shape: string, value: unknown, arg: Doc): GeoRegion {
  switch (shape) {
    case '$geometry': {
      if (!isPlainObject(value)) badValue(`$geometry must be an object: ${formatValue(arg)}`);
      checkCrs(value);
      const geometry = queryGeoJSON(value);
      if (geometry.parts.some((p) => p.kind !== 'polygon')) badValue(`$geoWithin not supported with provided geometry: ${formatValue(arg)}`);
      return { kind: 'polygons', geometry };
    }
    case '$box': {
      const corners = Array.isArray(value) && value.length === 2 ? value.map(legacyPair) : [];
      if (corners.length !== 2 || corners.some((c) => c === undefined)) badValue(`Point must only contain numeric elements: ${formatValue(arg)}`);
      const [[ax, ay], [bx, by]] = corners as [number, number][];
      return { kind: 'box', x0: Math.min(ax!, bx!), y0: Math.min(ay!, by!), x1: Math.max(ax!, bx!), y1: Math.max(ay!, by!) };
    }
    case '$polygon': {
      const points = Array.isArray(value) ? value.map(legacyPair) : [];
      if (points.some((p) => p === undefined)) badValue(`Point must only contain numeric elements: ${formatValue(arg)}`);
      if (points.length < 3) badValue('Polygon must have at least 3 points');
      return { kind: 'flatPolygon', points: points as [number, number][] };
    }
    case '$center': case '$centerSphere': {
      const center = Array.isArray(value) && value.length === 2 ? legacyPair(value[0]) : undefined;
      const radius = Array.isArray(value) ? value[1] : undefined;
      if (center === undefined) badValue(`Point must only contain numeric elements: ${formatValue(arg)}`);
      if (!isNumber(radius) || !(toDouble(radius) >= 0)) badValue(`radius must be a non-negative number: ${formatValue(arg)}`);
      const r = toDouble(radius);
      const [x, y] = center;
      if (shape === '$center') return { kind: 'circle', x, y, radius: r };
      if (!(Math.abs(x) <= 180 && Math.abs(y) <= 90)) badValue(`longitude/latitude is out of bounds, lng: ${x} lat: ${y}`);
      return { kind: 'cap', cap: s2.Cap.fromCenterAngle(s2.Point.fromLatLng(s2.LatLng.fromDegrees(y, x)), Math.min(r, Math.PI)), x, y, radius: r };
    }
    default:
      return badValue(`unknown geo specifier: ${shape}: ${formatValue(value)}`);
  }
}
