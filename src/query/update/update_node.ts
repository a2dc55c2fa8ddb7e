import { mongoError } from '../../base/errors.js';
import { compareStrings } from '../../bson/compare.js';
import { isArrayFilterPart, isPositionalPart, comparePathParts } from './field_ref.js';
import type { ModifierNode } from './modifier_node.js';

// The parsed update is a tree keyed by path part, as in MongoDB: this is what detects conflicting
// paths at parse time and fixes the order in which new fields are appended.
export interface ObjectNode {
  readonly kind: 'object';
  readonly children: Map<string, UpdateNode>;
  positional?: UpdateNode;
}

// Children keyed by array-filter identifier ('' for `$[]`), applied to every matching element.
export interface ArrayNode {
  readonly kind: 'array';
  readonly children: Map<string, UpdateNode>;
}

export interface RenameNode {
  readonly kind: 'rename';
  readonly from: readonly string[];
  readonly to: string;
}

// Stands at the source of a $rename so that other modifiers of that path conflict with it.
export interface PlaceholderNode {
  readonly kind: 'placeholder';
}

export type LeafNode = ModifierNode | RenameNode | PlaceholderNode;
export type InternalNode = ObjectNode | ArrayNode;
export type UpdateNode = InternalNode | LeafNode;

export function objectNode(): ObjectNode {
  return { kind: 'object', children: new Map() };
}

function arrayNode(): ArrayNode {
  return { kind: 'array', children: new Map() };
}

function getChild(node: InternalNode, name: string): UpdateNode | undefined {
  if (node.kind === 'object' && isPositionalPart(name)) return node.positional;
  return node.children.get(name);
}

function setChild(node: InternalNode, name: string, child: UpdateNode): void {
  if (node.kind === 'object' && isPositionalPart(name)) node.positional = child;
  else node.children.set(name, child);
}

export interface IdentifierScope {
  readonly defined: ReadonlySet<string>;
  readonly used: Set<string>;
}

// `$[i]` names its identifier; it may not come first and must have a filter.
function childName(parts: readonly string[], i: number, path: string, scope: IdentifierScope): string {
  const part = parts[i]!;
  if (!isArrayFilterPart(part)) return part;
  if (i === 0) {
    throw mongoError('BadValue', `Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '${path}'`);
  }
  const identifier = part.slice(2, -1);
  if (identifier.length > 0) {
    if (!scope.defined.has(identifier)) throw mongoError('BadValue', `No array filter found for identifier '${identifier}' in path '${path}'`);
    scope.used.add(identifier);
  }
  return identifier;
}

export function insertLeaf(root: ObjectNode, parts: readonly string[], leaf: LeafNode, scope: IdentifierScope): void {
  const path = parts.join('.');
  let current: InternalNode = root;
  for (let i = 0; i < parts.length - 1; i++) {
    const name = childName(parts, i, path, scope);
    const wantArray = isArrayFilterPart(parts[i + 1]!);
    let child = getChild(current, name);
    if (child === undefined) {
      child = wantArray ? arrayNode() : objectNode();
      setChild(current, name, child);
    } else if (child.kind !== (wantArray ? 'array' : 'object')) {
      throw conflict(path, parts.slice(0, i + 1).join('.'));
    }
    current = child as InternalNode;
  }
  const name = childName(parts, parts.length - 1, path, scope);
  if (getChild(current, name) !== undefined) throw conflict(path, path);
  setChild(current, name, leaf);
}

function conflict(path: string, at: string) {
  return mongoError('ConflictingUpdateOperators', `Updating the path '${path}' would create a conflict at '${at}'`);
}

// Two subtrees that reach the same element at run time (the positional `$` and the index it
// resolves to, or two array filters matching one element) combine; two leaves cannot.
export function mergeNodes(a: UpdateNode, b: UpdateNode, path: readonly string[]): UpdateNode {
  if (a.kind === 'object' && b.kind === 'object') {
    const merged = objectNode();
    mergeChildren(a.children, b.children, merged.children, path, (k) => k);
    if (a.positional && b.positional) merged.positional = mergeNodes(a.positional, b.positional, [...path, '$']);
    else merged.positional = a.positional ?? b.positional;
    return merged;
  }
  if (a.kind === 'array' && b.kind === 'array') {
    const merged = arrayNode();
    mergeChildren(a.children, b.children, merged.children, path, (k) => `$[${k}]`);
    return merged;
  }
  throw mongoError('ConflictingUpdateOperators', `Update created a conflict at '${path.join('.')}'`);
}

function mergeChildren(
  a: ReadonlyMap<string, UpdateNode>,
  b: ReadonlyMap<string, UpdateNode>,
  out: Map<string, UpdateNode>,
  path: readonly string[],
  label: (k: string) => string,
): void {
  for (const [k, v] of a) out.set(k, v);
  for (const [k, v] of b) {
    const existing = out.get(k);
    out.set(k, existing ? mergeNodes(existing, v, [...path, label(k)]) : v);
  }
}

const sortedCache = new WeakMap<Map<string, UpdateNode>, Array<[string, UpdateNode]>>();

export function sortedChildren(children: Map<string, UpdateNode>): ReadonlyArray<[string, UpdateNode]> {
  let sorted = sortedCache.get(children);
  if (!sorted) {
    sorted = [...children].sort(([x], [y]) => comparePathParts(x, y));
    sortedCache.set(children, sorted);
  }
  return sorted;
}

export function byteLess(a: string, b: string): boolean {
  return compareStrings(a, b) < 0;
}
