import { mongoError } from '../../base/errors.js';
import { compareValues } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { arrayIndexOfPart } from './field_ref.js';

export type ElementComparator = (a: unknown, b: unknown) => number;

// The $sort clause of $push (MongoDB's PatternElementCmp): 1/-1 orders whole elements; a pattern
// orders by the named fields, a missing field (or a non-document element) counting as null.
export function compilePushSort(clause: unknown): ElementComparator {
  if (isNumber(clause)) {
    const order = toDouble(clause);
    if (order !== 1 && order !== -1) throw mongoError('BadValue', 'The $sort element value must be either 1 or -1');
    return (a, b) => order * compareValues(a, b);
  }
  if (!isPlainObject(clause)) {
    throw mongoError('BadValue', 'The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields');
  }
  const keys = Object.keys(clause);
  if (keys.length === 0) throw mongoError('BadValue', 'The $sort pattern is empty when it should be a set of fields.');
  const fields = keys.map((key) => {
    const order = isNumber(clause[key]) ? toDouble(clause[key]) : 0;
    if (order !== 1 && order !== -1) throw mongoError('BadValue', 'The $sort element value must be either 1 or -1');
    if (key.length === 0) throw mongoError('BadValue', 'The $sort field cannot be empty');
    const parts = key.split('.');
    if (parts.some((p) => p.length === 0)) throw mongoError('BadValue', `The $sort field is a dotted field but has an empty part: ${key}`);
    return { parts, order };
  });
  return (a, b) => {
    for (const { parts, order } of fields) {
      const c = compareValues(sortKey(a, parts), sortKey(b, parts));
      if (c !== 0) return order * c;
    }
    return 0;
  };
}

function sortKey(element: unknown, parts: readonly string[]): unknown {
  let cur: unknown = isPlainObject(element) ? element : {};
  for (const part of parts) {
    if (isPlainObject(cur)) cur = (cur as Doc)[part];
    else if (Array.isArray(cur)) {
      const i = arrayIndexOfPart(part);
      cur = i === undefined ? undefined : cur[i];
    } else cur = undefined;
    if (cur === undefined) return null;
  }
  return cur;
}
