import { Double } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import type { IndexAccess } from '../../storage/index_access.js';
import { splitPath } from '../path.js';
import { setAtPath } from '../agg/stage_support.js';
import { compileExpression } from '../agg/expression.js';
import type { Candidate } from '../exec/plan_executor.js';
import { isGeoJSONObject } from '../../storage/geo/geometry.js';

// The $geoNear stage, read as the $near find it stands for (MongoDB rewrites it the same way):
// `near` (a point, or a let variable holding one) and `spherical` choose $near or $nearSphere and so the units, `query` is the rest of the
// filter, `key` the geo field (else the collection's only 2d index, or its only 2dsphere index);
// each result gets its distance (times distanceMultiplier) at distanceField and, with
// includeLocs, the location measured to.
export interface GeoNearOutput {
  near: unknown;
  spherical: boolean;
  key: string | undefined;
  query: Doc;
  minDistance: unknown;
  maxDistance: unknown;
  distanceField: string[];
  includeLocs: string[] | undefined;
  distanceMultiplier: number;
}

const FIELDS = new Set(['near', 'distanceField', 'spherical', 'key', 'query', 'includeLocs', 'distanceMultiplier', 'minDistance', 'maxDistance']);

function fail(code: number, message: string): never {
  throw new MongoError(code, message);
}

export function parseGeoNearStage(spec: unknown): GeoNearOutput {
  if (!isPlainObject(spec)) fail(ErrorCodes.FailedToParse, `$geoNear must take a nested object but found: ${bsonTypeName(spec)}`);
  for (const key of Object.keys(spec)) if (!FIELDS.has(key)) fail(ErrorCodes.FailedToParse, `unknown argument to $geoNear: ${key}`);
  if (spec.near === undefined) fail(ErrorCodes.FailedToParse, '$geoNear requires a \'near\' option as an Array or Object');
  const variable = typeof spec.near === 'string' && spec.near.startsWith('$$');
  if (!variable && !Array.isArray(spec.near) && !isPlainObject(spec.near)) fail(ErrorCodes.TypeMismatch, `$geoNear requires near argument to be a GeoJSON object or a legacy point(array) instead got ${bsonTypeName(spec.near)}`);
  if (typeof spec.distanceField !== 'string') fail(ErrorCodes.FailedToParse, '$geoNear requires a \'distanceField\' option as a String');
  if (spec.key !== undefined && (typeof spec.key !== 'string' || spec.key === '')) fail(ErrorCodes.TypeMismatch, `$geoNear parameter 'key' must be of type string but found type: ${bsonTypeName(spec.key)}`);
  if (spec.query !== undefined && !isPlainObject(spec.query)) fail(ErrorCodes.TypeMismatch, 'query must be an object');
  if (spec.includeLocs !== undefined && typeof spec.includeLocs !== 'string') fail(ErrorCodes.TypeMismatch, 'includeLocs must be a string');
  const multiplier = spec.distanceMultiplier ?? 1;
  if (!isNumber(multiplier)) fail(ErrorCodes.TypeMismatch, 'distanceMultiplier must be a number');
  if (!(toDouble(multiplier) >= 0)) fail(ErrorCodes.BadValue, `distanceMultiplier must be nonnegative, got ${toDouble(multiplier)}`);
  for (const name of ['minDistance', 'maxDistance']) {
    if (spec[name] !== undefined && !isNumber(spec[name])) fail(ErrorCodes.TypeMismatch, `${name} must be a number`);
  }
  return {
    near: spec.near,
    spherical: spec.spherical === true,
    key: spec.key as string | undefined,
    query: (spec.query as Doc | undefined) ?? {},
    minDistance: spec.minDistance,
    maxDistance: spec.maxDistance,
    distanceField: splitPath(spec.distanceField),
    includeLocs: spec.includeLocs === undefined ? undefined : splitPath(spec.includeLocs as string),
    distanceMultiplier: toDouble(multiplier),
  };
}

// The find filter the stage stands for, on the collection's indexes; `near` may name one of the
// command's let variables ("$$pt").
export function geoNearFilter(stage: GeoNearOutput, ns: string, indexes: readonly IndexAccess[], variables?: Record<string, unknown>): Doc {
  const key = stage.key ?? inferKey(ns, indexes);
  const near = typeof stage.near === 'string' ? compileExpression(stage.near, { variables })({}) : stage.near;
  if (!Array.isArray(near) && !isPlainObject(near)) fail(ErrorCodes.TypeMismatch, `$geoNear requires near argument to be a GeoJSON object or a legacy point(array) instead got ${bsonTypeName(near)}`);
  const limits: Doc = {};
  if (stage.minDistance !== undefined) limits.$minDistance = stage.minDistance;
  if (stage.maxDistance !== undefined) limits.$maxDistance = stage.maxDistance;
  let condition: Doc;
  if (isGeoJSONObject(near)) condition = { $nearSphere: { $geometry: near, ...limits } };
  else condition = { [stage.spherical ? '$nearSphere' : '$near']: near, ...limits };
  const onKey = { [key]: condition };
  return Object.keys(stage.query).length === 0 ? onKey : { $and: [onKey, stage.query] };
}

// A 2d index first, then a 2dsphere one, as MongoDB's extractGeoNearFieldFromIndexes.
function inferKey(ns: string, indexes: readonly IndexAccess[]): string {
  const geo = indexes.filter((i) => i.geo !== undefined && !i.hidden);
  for (const kind of ['2d', '2dsphere'] as const) {
    const of = geo.filter((i) => i.geo!.kind === kind);
    if (of.length > 1) fail(ErrorCodes.IndexNotFound, `There is more than one ${kind} index on ${ns}; unsure which to use for $geoNear`);
    if (of.length === 1) return of[0]!.geo!.field;
  }
  return fail(ErrorCodes.IndexNotFound, '$geoNear requires a 2d or 2dsphere index, but none were found');
}

export function geoNearShape(stage: GeoNearOutput): (c: Candidate) => Doc {
  return (c) => {
    let doc = setAtPath(c.doc, stage.distanceField, new Double((c.geoDistance ?? 0) * stage.distanceMultiplier));
    if (stage.includeLocs !== undefined) doc = setAtPath(doc, stage.includeLocs, c.geoPoint);
    return doc;
  };
}
