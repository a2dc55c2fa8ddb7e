import { valuesEqual } from '../bson/compare.js';
import { isPlainObject, type Doc } from '../bson/values.js';

// An update's description as its oplog entry records it (a change stream's `updateDescription`),
// computed by the writer, which holds the document before and after: what changed between the document before and after,
// as dotted paths. Fields of sub-documents and array elements are followed down, so a `$set` of
// `a.b` is `a.b`, a `$push` is `arr.<i>`; an array that became shorter is in `truncatedArrays`
// with its new size, and its remaining elements that changed are updated fields.

export interface UpdateDescription {
  updatedFields: Doc;
  removedFields: string[];
  truncatedArrays: { field: string; newSize: number }[];
}

export function describeUpdate(before: Doc, after: Doc): UpdateDescription {
  const out: UpdateDescription = { updatedFields: {}, removedFields: [], truncatedArrays: [] };
  diffObject(before, after, '', out);
  return out;
}

function diffObject(before: Doc, after: Doc, prefix: string, out: UpdateDescription): void {
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && after[key] === undefined) out.removedFields.push(prefix + key);
  }
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue;
    diffValue(before[key], value, prefix + key, out);
  }
}

function diffValue(before: unknown, after: unknown, path: string, out: UpdateDescription): void {
  if (before === undefined) {
    out.updatedFields[path] = after;
    return;
  }
  if (isPlainObject(before) && isPlainObject(after)) return diffObject(before, after, `${path}.`, out);
  if (Array.isArray(before) && Array.isArray(after)) return diffArray(before, after, path, out);
  if (!sameValue(before, after)) out.updatedFields[path] = after;
}

function diffArray(before: unknown[], after: unknown[], path: string, out: UpdateDescription): void {
  if (after.length < before.length) out.truncatedArrays.push({ field: path, newSize: after.length });
  after.forEach((value, i) => diffValue(i < before.length ? before[i] : undefined, value, `${path}.${i}`, out));
}

// Equal values of another type (an int become a double) are a change to the document.
function sameValue(a: unknown, b: unknown): boolean {
  return valuesEqual(a, b) && typeOf(a) === typeOf(b);
}

function typeOf(v: unknown): string {
  return (v as { _bsontype?: string } | null)?._bsontype ?? typeof v;
}
