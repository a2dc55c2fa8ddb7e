import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { formatValue } from '../../bson/format.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { legacyPair } from '../../storage/geo/geometry.js';
import { queryGeoJSON } from './geo_region.js';

// A $near or $nearSphere (MongoDB's GeoNearExpression): the point results are ordered from, and
// the distances they must lie within. A GeoJSON point ($geometry) measures in meters on the
// sphere; a legacy pair in radians on the sphere ($nearSphere, or $near read through a 2dsphere
// index) or in the plane's units ($near through a 2d index).
export interface NearQuery {
  field: string;
  op: '$near' | '$nearSphere';
  x: number;
  y: number;
  geoJSON: boolean;
  minDistance: number;
  maxDistance: number;
}

// Earth's radius as MongoDB's kRadiusOfEarthInMeters.
export const EARTH_RADIUS_METERS = 6378.1 * 1000;

function badValue(message: string): never {
  throw new MongoError(ErrorCodes.BadValue, message);
}

const NEAR_OPS = new Set(['$near', '$nearSphere', '$geoNear']);

function nearOpOf(condition: unknown): '$near' | '$nearSphere' | undefined {
  if (!isPlainObject(condition)) return undefined;
  if (condition.$near !== undefined || condition.$geoNear !== undefined) return '$near';
  return condition.$nearSphere !== undefined ? '$nearSphere' : undefined;
}

// The $near of a filter (at its top or in a top-level $and) and the filter without it.
export function extractNear(filter: Doc): { near: NearQuery; rest: Doc } | undefined {
  let found: NearQuery | undefined;
  let count = 0;
  const strip = (f: Doc): Doc => {
    const out: Doc = {};
    for (const [key, value] of Object.entries(f)) {
      if (key === '$and' && Array.isArray(value)) {
        out.$and = value.map((clause) => (isPlainObject(clause) ? strip(clause) : clause));
      } else if (!key.startsWith('$') && nearOpOf(value) !== undefined) {
        found = parseNear(key, value as Doc);
        count += 1;
      } else {
        out[key] = value;
      }
    }
    return out;
  };
  if (!mentionsNear(filter)) return undefined;
  const rest = strip(filter);
  if (count === 0) return undefined;
  if (count > 1) badValue('Too many geoNear expressions');
  if (Array.isArray(rest.$and) && rest.$and.every((c) => isPlainObject(c) && Object.keys(c).length === 0)) delete rest.$and;
  return { near: found!, rest };
}

// Every find asks: most filters name no near operator at their top, and are not copied.
function mentionsNear(filter: Doc): boolean {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value) && value.some((c) => isPlainObject(c) && mentionsNear(c))) return true;
    if (!key.startsWith('$') && nearOpOf(value) !== undefined) return true;
  }
  return false;
}

function parseNear(field: string, condition: Doc): NearQuery {
  const op = nearOpOf(condition)!;
  const arg = condition[op] ?? condition.$geoNear;
  for (const key of Object.keys(condition)) {
    if (!NEAR_OPS.has(key) && key !== '$maxDistance' && key !== '$minDistance') badValue(`${key} cannot be combined with ${op}`);
  }
  let point: [number, number] | undefined;
  let geoJSON = false;
  let limits: Doc = condition;
  if (isPlainObject(arg) && arg.$geometry !== undefined) {
    for (const key of Object.keys(arg)) {
      if (!['$geometry', '$maxDistance', '$minDistance'].includes(key)) badValue(`invalid argument in geo near query: ${key}`);
    }
    const geometry = queryGeoJSON(arg.$geometry);
    const part = geometry.parts[0]!;
    if (!isPlainObject(arg.$geometry) || arg.$geometry.type !== 'Point' || part.kind !== 'point') badValue(`invalid point in geo near query $geometry argument: ${formatValue(arg.$geometry)}`);
    point = [part.x, part.y];
    geoJSON = true;
    limits = { ...condition, ...arg };
  } else {
    point = legacyPair(arg);
    if (point === undefined) badValue(`${op} must be a point: ${formatValue(arg)}`);
  }
  const distance = (name: string, fallback: number): number => {
    const v = limits[name];
    if (v === undefined) return fallback;
    if (!isNumber(v)) badValue(`${name} must be a number`);
    const d = toDouble(v);
    if (!(d >= 0)) badValue(`${name} must be non-negative`);
    return d;
  };
  return { field, op, x: point[0], y: point[1], geoJSON, minDistance: distance('$minDistance', 0), maxDistance: distance('$maxDistance', Infinity) };
}
