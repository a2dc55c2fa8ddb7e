import type { ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareStrings, compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { bsonTag, isPlainObject, MinKey, type Doc } from '../bson/values.js';
import type { CollectionType, ShardType } from '../catalog/type_chunk.js';

// Zones (MongoDB's sharding_catalog_manager_zone_operations.cpp, as pure decisions): zone names
// live in config.shards' `tags` arrays, zone ranges in config.tags, one document per range:
// {_id, ns, tag, min, max}, min inclusive, max exclusive. Ranges of a sharded collection are stored
// with the full shard key; ranges of a namespace that is not sharded (yet) are stored as given.

// config.tags (TagsType).
export interface ZoneRangeType {
  _id?: ObjectId;
  ns: string;
  tag: string;
  min: Doc;
  max: Doc;
}

export interface ZoneRange {
  readonly tag: string;
  readonly min: Doc;
  readonly max: Doc;
}

// ChunkRange::validate: both bounds non-empty and min < max (BSON order, field names included).
export function checkZoneRangeBounds(min: Doc, max: Doc): void {
  if (Object.keys(min).length === 0) throw new MongoError(ErrorCodes.BadValue, 'min field is empty');
  if (Object.keys(max).length === 0) throw new MongoError(ErrorCodes.BadValue, 'max field is empty');
  if (compareValues(min, max) >= 0) {
    throw new MongoError(ErrorCodes.BadValue, `min: ${formatValue(min)} should be less than max: ${formatValue(max)}`);
  }
}

// ShardKeyPattern::checkShardKeyIsValidForMetadataStorage: no arrays, no regexes and no
// $-prefixed field names inside embedded documents.
function checkStorable(bound: Doc): void {
  for (const [field, value] of Object.entries(bound)) {
    if (!isStorable(value)) {
      throw new MongoError(ErrorCodes.BadValue, `Shard key element ${field}: ${formatValue(value)} is not valid for storage`);
    }
  }
}

function isStorable(value: unknown): boolean {
  if (value === undefined || Array.isArray(value) || bsonTag(value) === 'BSONRegExp') return false;
  if (isPlainObject(value)) return Object.entries(value).every(([k, v]) => !k.startsWith('$') && (!isPlainObject(v) || isStorable(v)));
  return true;
}

// KeyPattern::extendRangeBound(bound, false): the bound's fields must be the key's first fields,
// in order; the missing ones are filled with MinKey.
export function extendRangeBound(keyFields: readonly string[], bound: Doc): Doc {
  const fields = Object.keys(bound);
  const out: Doc = {};
  fields.forEach((field, i) => {
    if (i >= keyFields.length) throw new MongoError(16649, 'keyPattern must contain all fields in the range bound');
    if (keyFields[i] !== field) throw new MongoError(16634, 'field names of bound must match those of keyPattern');
    out[field] = bound[field];
  });
  for (const field of keyFields.slice(fields.length)) out[field] = new MinKey();
  return out;
}

function isFieldNamePrefixOf(bound: Doc, keyFields: readonly string[]): boolean {
  const fields = Object.keys(bound);
  return fields.length <= keyFields.length && fields.every((f, i) => keyFields[i] === f);
}

// ChunkRange::extractKeyPattern: a range of a namespace that is not sharded names its own key,
// and min and max must name the same fields in the same order.
function keyFieldsOfRange(min: Doc, max: Doc): string[] {
  const a = Object.keys(min);
  const b = Object.keys(max);
  if (a.length !== b.length || a.some((f, i) => b[i] !== f)) {
    throw new MongoError(ErrorCodes.ShardKeyNotFound, "the shard key of min doesn't match with the shard key of max");
  }
  return a;
}

interface ResolvedRange {
  min: Doc;
  max: Doc;
  keyFields: string[];
  hashedField: string | undefined;
}

// includeFullShardKey: a sharded collection's range is extended to the full shard key (its bounds
// must be prefixes of it); otherwise the range stays as given and names its own key.
function resolveRange(ns: string, min: Doc, max: Doc, collection: CollectionType | undefined): ResolvedRange {
  if (collection === undefined) return { min, max, keyFields: keyFieldsOfRange(min, max), hashedField: undefined };
  const keyFields = Object.keys(collection.key);
  for (const [name, bound] of [['min', min], ['max', max]] as const) {
    if (!isFieldNamePrefixOf(bound, keyFields)) {
      throw new MongoError(ErrorCodes.ShardKeyNotFound, `${name}: ${formatValue(bound)} is not a prefix of the shard key ${formatValue(collection.key)} of ns: ${ns}`);
    }
  }
  const hashedField = keyFields.find((f) => collection.key[f] === 'hashed');
  return { min: extendRangeBound(keyFields, min), max: extendRangeBound(keyFields, max), keyFields, hashedField };
}

function isValidHashedValue(v: unknown): boolean {
  const tag = bsonTag(v);
  return tag === 'Long' || tag === 'MinKey' || tag === 'MaxKey';
}

function zoneRangeString(r: ZoneRange): string {
  return `${formatValue(r.min)} -->> ${formatValue(r.max)}  on  ${r.tag}`;
}

// ZoneInfo::addRangeToZone: ranges of a namespace never overlap, except that adding the very same
// range to the same zone again is accepted (and changes nothing). Undefined when nothing overlaps.
export function findOverlappingRange(existing: readonly ZoneRange[], range: ZoneRange): ZoneRange | undefined {
  for (const r of existing) {
    if (compareValues(r.min, range.max) < 0 && compareValues(range.min, r.max) < 0) {
      if (compareValues(r.min, range.min) === 0 && compareValues(r.max, range.max) === 0 && r.tag === range.tag) return r;
      throw new MongoError(ErrorCodes.RangeOverlapConflict, `Zone range: ${zoneRangeString(range)} is overlapping with existing: ${zoneRangeString(r)}`);
    }
  }
  return undefined;
}

export function zoneExists(shards: readonly ShardType[], zone: string): boolean {
  return shards.some((s) => s.tags?.includes(zone) === true);
}

// addShardToZone: the shard must exist; adding a zone it already has changes nothing.
export function checkShardExists(shards: readonly ShardType[], shard: string): void {
  if (!shards.some((s) => s._id === shard)) throw new MongoError(ErrorCodes.ShardNotFound, `shard ${shard} does not exist`);
}

// removeShardFromZone (_isShardRequiredByZoneStillInUse): the last shard of a zone keeps it while
// any range of any namespace still uses the zone. Removing a zone the shard does not have is ok.
export function checkRemoveShardFromZone(req: { shards: readonly ShardType[]; shard: string; zone: string; zoneHasRanges: boolean }): void {
  checkShardExists(req.shards, req.shard);
  const inZone = req.shards.filter((s) => s.tags?.includes(req.zone) === true);
  if (inZone.length === 1 && inZone[0]!._id === req.shard && req.zoneHasRanges) {
    throw new MongoError(ErrorCodes.ZoneStillInUse, 'cannot remove a shard from zone if a chunk range is associated with it');
  }
}

export interface AssignKeyRangeRequest {
  readonly ns: string;
  readonly min: Doc;
  readonly max: Doc;
  readonly zone: string;
  readonly shards: readonly ShardType[];
  readonly collection: CollectionType | undefined; // config.collections entry when ns is sharded
  readonly existing: readonly ZoneRangeType[]; // config.tags of ns
}

export interface AssignKeyRangeDecision {
  // The config.tags document to upsert by {ns, min}; nothing changes when `alreadyAssigned`.
  readonly range: ZoneRangeType;
  readonly alreadyAssigned: boolean;
}

// assignKeyRangeToZone: storable bounds, an existing zone, a shard key prefix (extended to the full
// key) for a sharded collection, NumberLong/MinKey/MaxKey on a hashed field, and no overlap.
export function decideAssignKeyRange(req: AssignKeyRangeRequest): AssignKeyRangeDecision {
  checkZoneRangeBounds(req.min, req.max);
  checkStorable(req.min);
  checkStorable(req.max);
  if (!zoneExists(req.shards, req.zone)) throw new MongoError(ErrorCodes.ZoneNotFound, `zone ${req.zone} does not exist`);
  const resolved = resolveRange(req.ns, req.min, req.max, req.collection);
  const hashed = resolved.hashedField;
  if (hashed !== undefined && (!isValidHashedValue(resolved.min[hashed]) || !isValidHashedValue(resolved.max[hashed]))) {
    throw new MongoError(ErrorCodes.InvalidOptions, `there exists a field in the range ${formatValue(resolved.min)} -->> ${formatValue(resolved.max)} not of type NumberLong, MinKey, or MaxKey which corresponds to a hashed field in the shard key pattern ${formatValue(req.collection!.key)}`);
  }
  const existing = req.existing.map((r) => ({ tag: r.tag, min: extendRangeBound(resolved.keyFields, r.min), max: extendRangeBound(resolved.keyFields, r.max) }));
  const range = { ns: req.ns, min: resolved.min, max: resolved.max, tag: req.zone };
  return { range, alreadyAssigned: findOverlappingRange(existing, range) !== undefined };
}

// removeKeyRangeFromZone: the range to delete, as stored (full shard key when sharded). A range
// that is not there is not an error.
export function decideRemoveKeyRange(req: { ns: string; min: Doc; max: Doc; collection: CollectionType | undefined }): { ns: string; min: Doc; max: Doc } {
  checkZoneRangeBounds(req.min, req.max);
  const resolved = resolveRange(req.ns, req.min, req.max, req.collection);
  return { ns: req.ns, min: resolved.min, max: resolved.max };
}

// validateShardKeyAgainstExistingZones (shardCollection): every zone range of the namespace must
// name exactly the proposed key's fields, in order, and hold NumberLong/MinKey/MaxKey on a hashed one.
export function checkShardKeyAgainstZones(key: Doc, zones: readonly ZoneRange[]): void {
  const keyFields = Object.keys(key);
  for (const zone of zones) {
    const minFields = Object.keys(zone.min);
    const maxFields = Object.keys(zone.max);
    const n = Math.min(minFields.length, keyFields.length);
    for (let i = 0; i < n; i++) {
      const field = minFields[i]!;
      if (maxFields[i] !== field) {
        throw new MongoError(ErrorCodes.InvalidOptions, `the min and max of the existing zone ${formatValue(zone.min)} -->> ${formatValue(zone.max)} have non-matching keys`);
      }
      const lastOfBoth = (i + 1 < minFields.length) === (i + 1 < keyFields.length);
      if (field !== keyFields[i] || !lastOfBoth) {
        throw new MongoError(ErrorCodes.InvalidOptions, `the proposed shard key ${formatValue(key)} does not match with the shard key of the existing zone ${formatValue(zone.min)} -->> ${formatValue(zone.max)}`);
      }
      if (key[field] === 'hashed' && (!isValidHashedValue(zone.min[field]) || !isValidHashedValue(zone.max[field]))) {
        throw new MongoError(ErrorCodes.InvalidOptions, `cannot do hash sharding with the proposed key ${formatValue(key)} because there exists a zone ${formatValue(zone.min)} -->> ${formatValue(zone.max)} whose boundaries are not of type NumberLong, MinKey or MaxKey`);
      }
    }
  }
}

// Zone name -> the shards that have it, by shard id.
export function shardsByZone(shardZones: Readonly<Record<string, readonly string[]>>): Map<string, string[]> {
  const byZone = new Map<string, string[]>();
  for (const shard of Object.keys(shardZones).sort(compareStrings)) {
    for (const zone of shardZones[shard] ?? []) {
      const list = byZone.get(zone) ?? [];
      if (!list.includes(shard)) list.push(shard);
      byZone.set(zone, list);
    }
  }
  return byZone;
}

export function sortZoneRanges<T extends ZoneRange>(zones: readonly T[]): T[] {
  return [...zones].sort((a, b) => compareValues(a.min, b.min));
}
