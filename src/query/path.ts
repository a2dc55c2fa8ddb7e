import { isPlainObject } from '../bson/values.js';

// Dotted paths are split on every '.', empty components included: MongoDB rejects empty
// components where it matters (update, projection), so callers decide what an empty one means.
export function splitPath(path: string): string[] {
  return path.split('.');
}

// A component that reads as an array index: decimal digits only, no sign, no leading zero
// (MongoDB treats "01" as a field name, never as index 1).
export function arrayIndexOf(component: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(component)) return undefined;
  const n = Number(component);
  return Number.isSafeInteger(n) ? n : undefined;
}

// One step of a plain lookup: a field of a document, or a numeric position in an array.
export function getField(value: unknown, component: string): unknown {
  if (Array.isArray(value)) {
    const index = arrayIndexOf(component);
    return index === undefined ? undefined : value[index];
  }
  if (isPlainObject(value)) return Object.prototype.hasOwnProperty.call(value, component) ? value[component] : undefined;
  return undefined;
}

// The value at a dotted path without implicit array traversal: arrays are entered only through
// numeric components. Missing anywhere along the way is undefined.
export function getPath(doc: unknown, path: string): unknown {
  let current: unknown = doc;
  for (const component of splitPath(path)) {
    current = getField(current, component);
    if (current === undefined) return undefined;
  }
  return current;
}
