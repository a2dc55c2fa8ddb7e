import { MongoError } from '../base/errors.js';
import { compareValues } from '../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { arrayIndexOf, splitPath } from './path.js';

export interface SortField {
  path: string[];
  direction: 1 | -1;
  // {$meta: 'textScore'}: by the $text score the plan gave the document, highest first.
  meta?: 'textScore';
}

// What a plan knows of a document beyond its fields, for sorts by {$meta: ...}.
export type SortMetadata = (doc: Doc) => unknown;

export const TEXT_SCORE_UNAVAILABLE = 'query requires text score metadata, but it is not available';

export function parseSortSpec(spec: Doc): SortField[] {
  const fields: SortField[] = [];
  for (const key of Object.keys(spec)) {
    const value = spec[key];
    if (value === undefined) continue;
    if (isPlainObject(value)) {
      if (Object.keys(value).length !== 1 || value.$meta !== 'textScore') throw new MongoError(17312, '$meta is the only expression supported by $sort right now');
      fields.push({ path: splitPath(key), direction: -1, meta: 'textScore' });
      continue;
    }
    if (!isNumber(value)) throw new MongoError(15974, `Illegal key in $sort specification: ${key}: ${JSON.stringify(value)}`);
    const order = toDouble(value);
    if (order !== 1 && order !== -1) throw new MongoError(15975, '$sort key ordering must be 1 (for ascending) or -1 (for descending)');
    if (key === '') throw new MongoError(40352, 'FieldPath cannot be constructed with empty string');
    const path = splitPath(key);
    if (path.some((part) => part === '')) throw new MongoError(15998, 'FieldPath field names may not be empty strings.');
    fields.push({ path, direction: order });
  }
  return fields;
}

// The values a document contributes to an index on `path` (MongoDB derives sort keys the same
// way): arrays along the path are expanded, missing values count as null and an empty array at
// the end of the path as undefined, which sorts before null.
export function sortKeyCandidates(doc: unknown, path: readonly string[]): unknown[] {
  const out: unknown[] = [];
  collect(doc, path, 0, out);
  return out;
}

function collect(value: unknown, path: readonly string[], i: number, out: unknown[]): void {
  if (i === path.length) {
    if (!Array.isArray(value)) out.push(value === undefined ? null : value);
    else if (value.length === 0) out.push(undefined);
    else out.push(...value);
    return;
  }
  if (isPlainObject(value)) {
    const component = path[i]!;
    collect(Object.prototype.hasOwnProperty.call(value, component) ? value[component] : undefined, path, i + 1, out);
    return;
  }
  if (Array.isArray(value)) {
    const index = arrayIndexOf(path[i]!);
    if (index !== undefined && index < value.length) {
      collect(value[index], path, i + 1, out);
      return;
    }
    if (value.length === 0) out.push(null);
    for (const element of value) {
      if (isPlainObject(element)) collect(element, path, i, out);
      else out.push(null);
    }
    return;
  }
  out.push(null);
}

// Ascending order uses the smallest key a document has on the path, descending the largest.
export function sortKey(doc: unknown, path: readonly string[], direction: 1 | -1): unknown {
  const candidates = sortKeyCandidates(doc, path);
  let best = candidates[0];
  for (let i = 1; i < candidates.length; i++) {
    const c = compareValues(candidates[i], best);
    if (direction === 1 ? c < 0 : c > 0) best = candidates[i];
  }
  return best;
}

// Each document's keys are computed once per comparator, since a sort compares every document
// many times; documents must therefore not change while a comparator is in use. Non-documents
// (as $push's $sort may meet) are not cached.
export function compileSort(spec: Doc, textScore?: SortMetadata): (a: Doc, b: Doc) => number {
  const fields = parseSortSpec(spec);
  if (textScore === undefined && fields.some((f) => f.meta !== undefined)) throw new MongoError(40218, TEXT_SCORE_UNAVAILABLE);
  const cache = new WeakMap<Doc, unknown[]>();
  const keysOf = (doc: Doc): unknown[] => {
    const cacheable = typeof doc === 'object' && doc !== null;
    let keys = cacheable ? cache.get(doc) : undefined;
    if (keys === undefined) {
      keys = fields.map(({ path, direction, meta }) => (meta === undefined ? sortKey(doc, path, direction) : textScore!(doc)));
      if (cacheable) cache.set(doc, keys);
    }
    return keys;
  };
  return (a, b) => {
    const ka = keysOf(a);
    const kb = keysOf(b);
    for (let i = 0; i < fields.length; i++) {
      const c = compareValues(ka[i], kb[i]);
      if (c !== 0) return c * fields[i]!.direction;
    }
    return 0;
  };
}
