import { mongoError } from '../../base/errors.js';
import { bsonTag, cloneValue, isPlainObject, type Doc } from '../../bson/values.js';
import { isOperatorObject } from '../match/expression_parser.js';
import { comparePathParts } from './field_ref.js';

// The equality predicates of an upsert's query, by path: implicit equality, $eq, single-value
// $in and $all, and anything inside $and (or a one-clause $or, which MongoDB collapses).
export function extractEqualities(query: Doc): Map<string, unknown> {
  const out = new Map<string, unknown>();
  collect(query, out);
  const paths = [...out.keys()];
  for (const a of paths) {
    for (const b of paths) {
      if (a !== b && b.startsWith(`${a}.`)) {
        throw mongoError('NotSingleValueField', `cannot infer query fields to set, both paths '${b}' and '${a}' are matched`);
      }
    }
  }
  return out;
}

function collect(query: Doc, out: Map<string, unknown>): void {
  for (const [key, value] of Object.entries(query)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const clause of value) if (isPlainObject(clause)) collect(clause, out);
    } else if (key === '$or' && Array.isArray(value) && value.length === 1 && isPlainObject(value[0])) {
      collect(value[0], out);
    } else if (!key.startsWith('$')) {
      for (const v of equalitiesOf(value)) add(out, key, v);
    }
  }
}

function equalitiesOf(condition: unknown): unknown[] {
  if (bsonTag(condition) === 'BSONRegExp') return [];
  if (!isOperatorObject(condition)) return [condition];
  const found: unknown[] = [];
  for (const [op, arg] of Object.entries(condition)) {
    if (op === '$eq') found.push(arg);
    else if (op === '$in' && Array.isArray(arg) && arg.length === 1 && bsonTag(arg[0]) !== 'BSONRegExp') found.push(arg[0]);
    else if (op === '$all' && Array.isArray(arg)) {
      for (const v of arg) if (bsonTag(v) !== 'BSONRegExp' && !(isPlainObject(v) && v.$elemMatch !== undefined)) found.push(v);
    }
  }
  return found;
}

function add(out: Map<string, unknown>, path: string, value: unknown): void {
  if (out.has(path)) throw mongoError('NotSingleValueField', `cannot infer query fields to set, path '${path}' is matched twice`);
  out.set(path, value);
}

// Lays the equalities out as a document, paths in sorted order, _id first.
export function seedDocument(equalities: ReadonlyMap<string, unknown>): Doc {
  const doc: Doc = {};
  const paths = [...equalities.keys()].sort((a, b) => (a === '_id' ? -1 : b === '_id' ? 1 : comparePaths(a, b)));
  for (const path of paths) {
    const parts = path.split('.');
    let target = doc;
    for (const part of parts.slice(0, -1)) {
      if (!isPlainObject(target[part])) target[part] = {};
      target = target[part] as Doc;
    }
    target[parts[parts.length - 1]!] = cloneValue(equalities.get(path));
  }
  return doc;
}

function comparePaths(a: string, b: string): number {
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const c = comparePathParts(pa[i]!, pb[i]!);
    if (c !== 0) return c;
  }
  return pa.length - pb.length;
}
