import { someOnPath, type LeafArrays } from './element_path.js';

// Filled in by a successful match: the position, in the first array the filter traversed, of
// the element that satisfied it (what the positional `$` of projections and updates refers to).
export interface MatchDetails {
  elemMatchKey?: string;
}

// A compiled match expression. `input` is a document for expressions on a path, or the array
// element itself for the children of a value-form $elemMatch (which have no path).
export type MatchNode = (input: unknown, details?: MatchDetails) => boolean;

export type ValuePredicate = (value: unknown, details?: MatchDetails) => boolean;

export function onPath(path: readonly string[] | null, leaf: LeafArrays, predicate: ValuePredicate): MatchNode {
  if (path === null) return (input, details) => predicate(input, details);
  return (input, details) =>
    someOnPath(input, path, leaf, (value, offset) => {
      if (!predicate(value, details)) return false;
      if (details !== undefined && offset !== undefined) details.elemMatchKey = offset;
      return true;
    });
}

export function andNode(children: MatchNode[]): MatchNode {
  if (children.length === 1) return children[0]!;
  return (input, details) => {
    for (const child of children) {
      if (!child(input, details)) {
        if (details !== undefined) delete details.elemMatchKey;
        return false;
      }
    }
    return true;
  };
}

// $or, $nor and $not never report a position, as in MongoDB.
export function orNode(children: MatchNode[]): MatchNode {
  return (input) => children.some((child) => child(input));
}

export function notNode(child: MatchNode): MatchNode {
  return (input) => !child(input);
}

export const alwaysTrue: MatchNode = () => true;
export const alwaysFalse: MatchNode = () => false;
