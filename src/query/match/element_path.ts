import { isPlainObject } from '../../bson/values.js';
import { arrayIndexOf } from '../path.js';

// What a path yields when it ends at an array (MongoDB's ElementPath::LeafArrayBehavior):
// 'traverse' yields each element and then the array itself (comparisons, $in, $type ...);
// 'noTraversal' yields the array only ($size, $elemMatch).
export type LeafArrays = 'traverse' | 'noTraversal';

// Called once per value the path reaches; `offset` is the position, in the outermost array that
// was traversed implicitly, of the element that produced the value (the positional `$` needs it).
// Returning true stops the walk.
export type Visit = (value: unknown, offset: string | undefined) => boolean;

// Walks every value a dotted path reaches in `root`, following MongoDB's BSONElementIterator:
// arrays met before the last component are traversed element by element (documents are entered,
// numeric components also select a position), a missing field yields `undefined` once, and
// scalars met before the end yield nothing when inside an array.
export function someOnPath(root: unknown, parts: readonly string[], leaf: LeafArrays, visit: Visit): boolean {
  return walkObject(root, parts, 0, leaf, visit, undefined);
}

function fieldOf(container: unknown, name: string): unknown {
  if (Array.isArray(container)) {
    const index = arrayIndexOf(name);
    return index === undefined ? undefined : container[index];
  }
  if (isPlainObject(container) && Object.prototype.hasOwnProperty.call(container, name)) return container[name];
  return undefined;
}

function walkObject(obj: unknown, parts: readonly string[], from: number, leaf: LeafArrays, visit: Visit, outer: string | undefined): boolean {
  let current = obj;
  for (let i = from; i < parts.length; i++) {
    const value = fieldOf(current, parts[i]!);
    const last = i === parts.length - 1;
    if (value === undefined) return visit(undefined, outer);
    if (Array.isArray(value)) return walkArray(value, parts, i + 1, leaf, visit, outer);
    if (last) return visit(value, outer);
    if (!isPlainObject(value)) return visit(undefined, outer);
    current = value;
  }
  return visit(current, outer);
}

function walkArray(arr: unknown[], parts: readonly string[], rest: number, leaf: LeafArrays, visit: Visit, outer: string | undefined): boolean {
  if (rest === parts.length) {
    if (leaf === 'traverse') {
      for (let i = 0; i < arr.length; i++) if (visit(arr[i], outer ?? String(i))) return true;
    }
    return visit(arr, outer);
  }
  const next = parts[rest]!;
  const position = arrayIndexOf(next);
  const terminal = rest === parts.length - 1;
  for (let i = 0; i < arr.length; i++) {
    const element = arr[i];
    const positional = position === i;
    if (isPlainObject(element)) {
      if (walkObject(element, parts, rest, leaf, visit, outer ?? String(i))) return true;
      if (!positional) continue;
      if (terminal ? visit(element, outer) : walkObject(element, parts, rest + 1, leaf, visit, outer)) return true;
    } else if (positional) {
      if (terminal) {
        if (visit(element, outer)) return true;
      } else if (Array.isArray(element) && walkArray(element, parts, rest + 1, leaf, visit, outer)) {
        return true;
      }
    }
  }
  return false;
}
