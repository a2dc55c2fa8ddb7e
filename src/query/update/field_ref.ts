import { mongoError } from '../../base/errors.js';
import { compareStrings } from '../../bson/compare.js';

// One dotted update path split into its parts, with the checks MongoDB's field_checker makes
// before any modifier looks at its argument.
export function parseUpdatePath(path: string): string[] {
  if (path.length === 0) throw mongoError('EmptyFieldName', 'An empty update path is not valid.');
  const parts = path.split('.');
  if (parts.some((p) => p.length === 0)) {
    throw mongoError('EmptyFieldName', `The update path '${path}' contains an empty field name, which is not allowed.`);
  }
  return parts;
}

export function isPositionalPart(part: string): boolean {
  return part === '$';
}

export function isArrayFilterPart(part: string): boolean {
  return part.length >= 3 && part.startsWith('$[') && part.endsWith(']');
}

export function isDynamicPath(parts: readonly string[]): boolean {
  return parts.some((p) => isPositionalPart(p) || isArrayFilterPart(p));
}

// At most one `$`, and never first: the positional element stands for an index into an array,
// so something must name that array.
export function checkPositionalParts(parts: readonly string[], path: string): void {
  const positions = parts.flatMap((p, i) => (isPositionalPart(p) ? [i] : []));
  if (positions.length > 1) throw mongoError('BadValue', `Too many positional (i.e. '$') elements found in path '${path}'`);
  if (positions[0] === 0) throw mongoError('BadValue', `Cannot have positional (i.e. '$') element in the first position in path '${path}'`);
}

// Array indexes in an update path: plain base-10 digits (MongoDB's parseUnsignedBase10Integer).
export function arrayIndexOfPart(part: string): number | undefined {
  if (!/^[0-9]+$/.test(part)) return undefined;
  const n = Number(part);
  return Number.isSafeInteger(n) ? n : undefined;
}

// The order in which sibling fields are visited (pathsupport::cmpPathsAndArrayIndexes): byte
// order, except that two canonical non-negative integers compare as numbers, so `a.10` comes
// after `a.9`. New fields are therefore appended in this order, whatever the update's order.
export function comparePathParts(a: string, b: string): number {
  const numeric = (s: string) => /^[0-9]+$/.test(s) && (s.length === 1 || s[0] !== '0');
  if (numeric(a) && numeric(b)) {
    if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  }
  return compareStrings(a, b);
}
