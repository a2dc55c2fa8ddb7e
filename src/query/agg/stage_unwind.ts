import { Long, isPlainObject, type Doc } from '../../bson/values.js';
import { fail } from './operator_support.js';
import type { Stage, StageParser } from './stage_support.js';

function fieldPathOf(v: unknown, code: number, what: string): string[] {
  if (typeof v !== 'string') fail(code, `expected a string as specification for ${what}`);
  if (!v.startsWith('$')) fail(28818, `path option to $unwind stage should be prefixed with a '$': ${v}`);
  const parts = v.slice(1).split('.');
  if (parts.some((p) => p === '' || p.startsWith('$'))) fail(15998, 'FieldPath field names may not be empty strings.');
  return parts;
}

function getAt(doc: Doc, path: string[]): unknown {
  let current: unknown = doc;
  for (const p of path) {
    if (!isPlainObject(current)) return undefined;
    current = current[p];
  }
  return current;
}

// A copy of `doc` with the value at `path` replaced; only the objects along the path are copied.
function setAt(doc: Doc, path: string[], value: unknown, depth = 0): Doc {
  const out: Doc = { ...doc };
  const key = path[depth]!;
  if (depth === path.length - 1) out[key] = value;
  else out[key] = setAt(out[key] as Doc, path, value, depth + 1);
  return out;
}

export const parseUnwind: StageParser = (spec): Stage => {
  let path: string[];
  let includeArrayIndex: string[] | undefined;
  let preserve = false;
  if (typeof spec === 'string') {
    path = fieldPathOf(spec, 15981, '$unwind');
  } else if (isPlainObject(spec)) {
    for (const key of Object.keys(spec)) {
      if (!['path', 'includeArrayIndex', 'preserveNullAndEmptyArrays'].includes(key)) fail(28811, `unrecognized option to $unwind stage: ${key}`);
    }
    if (!('path' in spec)) fail(28812, 'no path specified to $unwind stage');
    path = fieldPathOf(spec.path, 28808, "$unwind's path option");
    if ('preserveNullAndEmptyArrays' in spec) {
      if (typeof spec.preserveNullAndEmptyArrays !== 'boolean') fail(28809, 'expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage');
      preserve = spec.preserveNullAndEmptyArrays;
    }
    if ('includeArrayIndex' in spec) {
      const idx = spec.includeArrayIndex;
      if (typeof idx !== 'string' || idx === '') fail(28810, 'expected a non-empty string for the includeArrayIndex option to $unwind stage');
      if (idx.startsWith('$')) fail(28822, `includeArrayIndex option to $unwind stage should not be prefixed with a '$': ${idx}`);
      includeArrayIndex = idx.split('.');
    }
  } else {
    return fail(15981, `expected either a string or an object as specification for $unwind stage, got ${typeof spec}`);
  }
  return function* (input) {
    for (const doc of input) {
      const v = getAt(doc, path);
      if (Array.isArray(v) && v.length > 0) {
        for (let i = 0; i < v.length; i++) {
          let out = setAt(doc, path, v[i]);
          if (includeArrayIndex !== undefined) out = setAt(out, includeArrayIndex, Long.fromNumber(i));
          yield out;
        }
      } else if (Array.isArray(v) || v === undefined || v === null) {
        if (!preserve) continue;
        // An empty array disappears from the preserved document; null stays null.
        let out = Array.isArray(v) ? withoutPath(doc, path) : doc;
        if (includeArrayIndex !== undefined) out = setAt(out, includeArrayIndex, null);
        yield out;
      } else {
        yield includeArrayIndex === undefined ? doc : setAt(doc, includeArrayIndex, null);
      }
    }
  };
};

function withoutPath(doc: Doc, path: string[], depth = 0): Doc {
  const out: Doc = { ...doc };
  const key = path[depth]!;
  if (depth === path.length - 1) delete out[key];
  else if (isPlainObject(out[key])) out[key] = withoutPath(out[key] as Doc, path, depth + 1);
  return out;
}
