import { valuesEqual } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';

// MongoDB's document diff (doc_diff.h), what an update changed: `u` the fields given a new value,
// `i` the fields added, `d` the fields removed (each `false`), and `s<field>` the diff of an
// embedded document changed in place. An array is a value. Undefined when nothing changed.
export function documentDiff(before: Doc, after: Doc): Doc | undefined {
  const u: Doc = {};
  const i: Doc = {};
  const d: Doc = {};
  const sub: Doc = {};
  for (const field of Object.keys(before)) if (!(field in after)) d[field] = false;
  for (const [field, value] of Object.entries(after)) {
    if (!(field in before)) {
      i[field] = value;
      continue;
    }
    const old = before[field];
    if (isPlainObject(old) && isPlainObject(value)) {
      const inner = documentDiff(old, value);
      if (inner !== undefined) sub[`s${field}`] = inner;
    } else if (!valuesEqual(old, value) || typeOf(old) !== typeOf(value)) {
      u[field] = value;
    }
  }
  const diff: Doc = {};
  if (Object.keys(d).length > 0) diff.d = d;
  if (Object.keys(u).length > 0) diff.u = u;
  if (Object.keys(i).length > 0) diff.i = i;
  Object.assign(diff, sub);
  return Object.keys(diff).length === 0 ? undefined : diff;
}

// Whether the diff changed the value at a dotted path: the path's field, or one above it, was
// set, added or removed, or the document at the path, or on the way to it, changed in place where
// the rest of the path leads.
export function diffChangesPath(diff: Doc, path: string): boolean {
  const dot = path.indexOf('.');
  const field = dot < 0 ? path : path.slice(0, dot);
  for (const part of ['u', 'i', 'd']) if (isPlainObject(diff[part]) && field in diff[part]) return true;
  const inner = diff[`s${field}`];
  return isPlainObject(inner) && (dot < 0 || diffChangesPath(inner, path.slice(dot + 1)));
}

function typeOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}
