import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, toDouble, type Doc } from '../../bson/values.js';

// A geo index's key pattern names one field '2dsphere' (GeoJSON and legacy pairs on the sphere)
// or '2d' (legacy pairs on a flat plane bounded by min and max, hashed to `bits` per axis), and
// any number of ordinary fields beside it.
export type GeoIndexKind = '2dsphere' | '2d';

export interface GeoIndexSpec {
  kind: GeoIndexKind;
  field: string;
  // 2d only: the plane's bounds and its precision.
  min: number;
  max: number;
  bits: number;
}

const KINDS = new Set<unknown>(['2dsphere', '2d']);

export function isGeoKeyPattern(key: Doc): boolean {
  return Object.values(key).some((v) => KINDS.has(v));
}

// The spec as listIndexes shows it: a 2dsphere index gains 2dsphereIndexVersion 3, as mongod
// adds it; a 2d index's bits, min and max are checked.
export function normalizeGeoIndexSpec(raw: Doc): Doc {
  const key = raw.key as Doc;
  const geoFields = Object.keys(key).filter((f) => KINDS.has(key[f]));
  const refuse = (message: string): never => { throw new MongoError(ErrorCodes.CannotCreateIndex, message); };
  if (geoFields.length > 1) refuse(`docshard indexes one geo field per index; found ${geoFields.join(', ')}`);
  const field = geoFields[0]!;
  if (key[field] === '2dsphere') {
    const version = raw['2dsphereIndexVersion'] ?? 3;
    if (!isNumber(version) || ![1, 2, 3].includes(toDouble(version))) refuse(`unsupported geo index version { 2dsphereIndexVersion : ${String(version)} }, only support versions: [1,2,3]`);
    return { ...raw, '2dsphereIndexVersion': version };
  }
  if (Object.keys(key)[0] !== field) refuse('2d has to be first in index');
  for (const option of ['bits', 'min', 'max']) if (raw[option] !== undefined && !isNumber(raw[option])) refuse(`${option} must be a number`);
  const spec = geoIndexSpec(raw);
  if (!(spec.bits >= 1 && spec.bits <= 32) || !Number.isInteger(spec.bits)) refuse('bits in geo index must be between 1 and 32');
  if (!(spec.min < spec.max)) refuse('need a max value greater than the min value for a 2d index');
  return raw;
}

const parsed = new WeakMap<Doc, GeoIndexSpec>();

export function geoIndexSpec(spec: Doc): GeoIndexSpec {
  let out = parsed.get(spec);
  if (out !== undefined) return out;
  const key = spec.key as Doc;
  const field = Object.keys(key).find((f) => KINDS.has(key[f]))!;
  const num = (v: unknown, fallback: number): number => (isNumber(v) ? toDouble(v) : fallback);
  out = { kind: key[field] as GeoIndexKind, field, min: num(spec.min, -180), max: num(spec.max, 180), bits: num(spec.bits, 26) };
  parsed.set(spec, out);
  return out;
}
