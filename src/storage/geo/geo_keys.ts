import type { Long } from 'bson';
import { encodeKey, type Ordering } from '../../bson/key_string.js';
import { formatValue } from '../../bson/format.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { generateIndexKeys } from '../index_key_generator.js';
import { GeoParseError, legacyPair, parseLocation } from './geometry.js';
import type { GeoIndexSpec } from './geo_index_spec.js';
import { geometryCells } from './sphere_cells.js';
import { flatCellKey, inFlatBounds } from './flat_cells.js';

// A document's entries in a geo index: one per cell of its location (2dsphere: each geometry's
// covering; 2d: each point's grid cell) times each key of its other fields, the cell standing
// where the geo field is in the key pattern. A document without a location has no entry (a geo
// index is sparse on its geo field, as MongoDB's 2dsphere version 2 and later and 2d are); one
// whose location cannot be read is refused, as mongod refuses it.
export function geoIndexKeys(doc: Doc, spec: GeoIndexSpec, keyPattern: Doc, ordering: Ordering): { keys: unknown[][]; encoded: Buffer[] } {
  const locations = valuesAtPath(doc, spec.field.split('.'));
  if (locations.length === 0) return { keys: [], encoded: [] };
  const cells = new Map<string, Long>();
  for (const value of locations.flatMap(eachLocation)) {
    for (const cell of spec.kind === '2d' ? flatCells(doc, value, spec) : sphereCells(doc, value)) cells.set(cell.toString(), cell);
  }
  const fields = Object.keys(keyPattern);
  const at = fields.indexOf(spec.field);
  const others: Doc = {};
  for (const f of fields) if (f !== spec.field) others[f] = keyPattern[f];
  const otherKeys = fields.length === 1 ? [[]] : generateIndexKeys(doc, others).keys;
  const keys: unknown[][] = [];
  for (const rest of otherKeys) for (const cell of cells.values()) keys.push([...rest.slice(0, at), cell, ...rest.slice(at)]);
  return { keys, encoded: keys.map((k) => encodeKey(k, ordering)) };
}

function sphereCells(doc: Doc, value: unknown): Long[] {
  try {
    const geometry = parseLocation(value);
    if (geometry === undefined) throw new GeoParseError(`unknown GeoJSON type: ${formatValue(value)}`);
    for (const part of geometry.parts) {
      if (part.kind === 'point' && part.sphere === undefined) throw new GeoParseError(`longitude/latitude is out of bounds, lng: ${part.x} lat: ${part.y}`);
    }
    return geometryCells(geometry);
  } catch (e) {
    if (e instanceof GeoParseError) throw new MongoError(16755, `Can't extract geo keys: ${formatValue(doc)}  ${e.message}`);
    throw e;
  }
}

// An array of pairs or of GeoJSON objects is a document with several locations.
export function eachLocation(value: unknown): unknown[] {
  return Array.isArray(value) && value.length > 0 && (Array.isArray(value[0]) || isPlainObject(value[0])) ? value : [value];
}

// A 2d index holds legacy pairs only.
function flatCells(doc: Doc, value: unknown, spec: GeoIndexSpec): Long[] {
  const pair = legacyPair(value);
  if (pair === undefined) throw new MongoError(13026, `geo values must be 'legacy coordinate pairs' for 2d indexes :: caused by :: ${formatValue(doc)}`);
  if (!inFlatBounds(spec, pair[0], pair[1])) throw new MongoError(13027, `point not in interval of [ ${spec.min}, ${spec.max} ) :: caused by :: ${formatValue(doc)}`);
  return [flatCellKey(spec, pair[0], pair[1])];
}

// The values a geo field's path reaches: through arrays of embedded documents on the way, but
// not into the value itself (a legacy pair is an array). Null stands for no location.
export function valuesAtPath(value: unknown, path: readonly string[]): unknown[] {
  if (path.length === 0) return value === undefined || value === null ? [] : [value];
  if (Array.isArray(value)) return value.flatMap((v) => (isPlainObject(v) ? valuesAtPath(v, path) : []));
  if (!isPlainObject(value)) return [];
  return valuesAtPath(value[path[0]!], path.slice(1));
}
