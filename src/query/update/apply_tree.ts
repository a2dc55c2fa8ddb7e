import { mongoError } from '../../base/errors.js';
import { valuesEqual } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { elementToString, idElementString } from './bson_string.js';
import { arrayIndexOfPart } from './field_ref.js';
import { identical } from './identical.js';
import { NOOP, REMOVE, type ModifierContext, type ModifierNode } from './modifier_node.js';
import { byteLess, mergeNodes, sortedChildren, type ArrayNode, type ObjectNode, type RenameNode, type UpdateNode } from './update_node.js';

type Container = Doc | unknown[];

export interface ApplyState {
  readonly root: Doc;
  readonly isInsert: boolean;
  readonly now: Date | undefined;
  readonly matchedField: string | undefined;
  readonly arrayFilters: ReadonlyMap<string, (element: unknown) => boolean>;
}

// Where a node applies: `value` is the deepest element of the path that exists (held in
// `parent` under `key`, both absent at the root); `toCreate` is the rest of the path.
interface Cursor {
  value: unknown;
  parent: Container | undefined;
  key: string | undefined;
  taken: string[];
  toCreate: string[];
}

// Applies the tree to `doc` in place.
export function applyTree(root: ObjectNode, doc: Doc, st: ApplyState): void {
  applyObject(root, { value: doc, parent: undefined, key: undefined, taken: [], toCreate: [] }, st);
}

function applyNode(node: UpdateNode, cur: Cursor, st: ApplyState): void {
  switch (node.kind) {
    case 'object': return applyObject(node, cur, st);
    case 'array': return applyArray(node, cur, st);
    case 'modifier': return applyModifier(node, cur, st);
    case 'rename': return applyRename(node, cur, st);
    case 'placeholder': return;
  }
}

function applyObject(node: ObjectNode, cur: Cursor, st: ApplyState): void {
  let positional = node.positional;
  const matched = st.matchedField;
  if (positional && (matched === undefined || matched === '')) {
    throw mongoError('BadValue', 'The positional operator did not find the match needed from the query.');
  }
  for (const [name, child] of sortedChildren(node.children)) {
    if (positional && name === matched) {
      applyChild(mergeNodes(positional, child, [...cur.taken, ...cur.toCreate, name]), name, cur, st);
      positional = undefined;
      continue;
    }
    if (positional && byteLess(matched!, name)) {
      applyChild(positional, matched!, cur, st);
      positional = undefined;
    }
    applyChild(child, name, cur, st);
  }
  if (positional) applyChild(positional, matched!, cur, st);
}

function applyChild(child: UpdateNode, field: string, cur: Cursor, st: ApplyState): void {
  advance(cur);
  if (cur.toCreate.length > 0) {
    applyNode(child, { ...cur, toCreate: [...cur.toCreate, field] }, st);
    return;
  }
  const value = childOf(cur.value, field);
  if (value === undefined) applyNode(child, { ...cur, toCreate: [field] }, st);
  else applyNode(child, { value, parent: cur.value as Container, key: field, taken: [...cur.taken, field], toCreate: [] }, st);
}

// An earlier sibling may have created part of the path this cursor still meant to create.
function advance(cur: Cursor): void {
  while (cur.toCreate.length > 0) {
    const next = childOf(cur.value, cur.toCreate[0]!);
    if (next === undefined) return;
    cur.parent = cur.value as Container;
    cur.key = cur.toCreate[0]!;
    cur.value = next;
    cur.taken = [...cur.taken, cur.key];
    cur.toCreate = cur.toCreate.slice(1);
  }
}

function childOf(container: unknown, field: string): unknown {
  if (Array.isArray(container)) {
    const i = arrayIndexOfPart(field);
    return i === undefined ? undefined : container[i];
  }
  if (isPlainObject(container) && Object.hasOwn(container, field)) return container[field];
  return undefined;
}

function applyArray(node: ArrayNode, cur: Cursor, st: ApplyState): void {
  if (cur.toCreate.length > 0) {
    throw mongoError('BadValue', `The path '${[...cur.taken, ...cur.toCreate].join('.')}' must exist in the document in order to apply array updates.`);
  }
  const arr = cur.value;
  if (!Array.isArray(arr)) {
    throw mongoError('BadValue', `Cannot apply array updates to non-array element ${elementToString(cur.key ?? '', arr)}`);
  }
  const children = sortedChildren(node.children);
  for (let i = 0; i < arr.length; i++) {
    const matching = children.filter(([id]) => id === '' || st.arrayFilters.get(id)!(arr[i]));
    if (matching.length === 0) continue;
    const field = String(i);
    const path = [...cur.taken, field];
    const child = matching.map(([, c]) => c).reduce((a, b) => mergeNodes(a, b, path));
    applyNode(child, { value: arr[i], parent: arr, key: field, taken: path, toCreate: [] }, st);
  }
}

function modifierContext(path: readonly string[], st: ApplyState): ModifierContext {
  return { path: path.join('.'), field: path[path.length - 1]!, doc: st.root, isInsert: st.isInsert, now: st.now };
}

function applyModifier(node: ModifierNode, cur: Cursor, st: ApplyState): void {
  if (node.insertOnly && !st.isInsert) return;
  if (cur.toCreate.length === 0) {
    const result = node.updateExisting(cur.value, modifierContext(cur.taken, st));
    if (result === NOOP) return;
    writeExisting(cur, result === REMOVE ? REMOVE : result, st.isInsert);
    return;
  }
  if (!node.allowCreation) {
    if (!node.allowNonViablePath) checkViability(cur);
    return;
  }
  createAt(cur, node.valueForNew(modifierContext([...cur.taken, ...cur.toCreate], st)), st.isInsert);
}

function writeExisting(cur: Cursor, value: unknown, isInsert: boolean): void {
  if (value !== REMOVE && identical(value, cur.value)) return;
  if (cur.taken[0] === '_id') {
    throw mongoError('ImmutableField', `Performing an update on the path '${cur.taken.join('.')}' would modify the immutable field '_id'`);
  }
  // A stored '$'-prefixed top-level field may be removed, not given a new value (MongoDB validates
  // the element an update writes).
  if (value !== REMOVE && cur.taken.length === 1 && !isInsert) checkTopLevelFieldName(cur.taken[0]!);
  const parent = cur.parent!;
  const key = cur.key!;
  if (Array.isArray(parent)) parent[arrayIndexOfPart(key)!] = value === REMOVE ? null : value;
  else if (value === REMOVE) delete parent[key];
  else parent[key] = value;
}

// The document an upsert inserts is checked as an insert is, which allows '$'-prefixed top-level
// fields (MongoDB 5.0+).
function createAt(cur: Cursor, value: unknown, isInsert: boolean): void {
  const [first, ...rest] = cur.toCreate as [string, ...string[]];
  if (cur.taken[0] === '_id') {
    const path = [...cur.taken, ...cur.toCreate].join('.');
    throw mongoError('ImmutableField', `Updating the path '${path}' to ${elementToString(cur.key!, cur.value)} would modify the immutable field '_id'`);
  }
  if (cur.taken.length === 0 && !isInsert) checkTopLevelFieldName(first);
  let built = value;
  for (let i = rest.length - 1; i >= 0; i--) built = { [rest[i]!]: built };
  const target = cur.value;
  if (isPlainObject(target)) {
    target[first] = built;
    return;
  }
  const index = Array.isArray(target) ? arrayIndexOfPart(first) : undefined;
  if (index === undefined) {
    throw mongoError('PathNotViable', `Cannot create field '${first}' in element {${elementToString(cur.key ?? '', target)}}`);
  }
  const arr = target as unknown[];
  while (arr.length < index) arr.push(null);
  arr[index] = built;
}

// Storage validation: a top-level field may not start with '$' (nested ones may, since 5.0).
export function checkTopLevelFieldName(name: string): void {
  if (name.startsWith('$')) {
    throw mongoError('DollarPrefixedFieldName', `The dollar ($) prefixed field '${name}' in '${name}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.`);
  }
}

function checkViability(cur: Cursor): void {
  const target = cur.value;
  if (isPlainObject(target)) return;
  if (Array.isArray(target) && arrayIndexOfPart(cur.toCreate[0]!) !== undefined) return;
  throw mongoError('PathNotViable', `Cannot use the part (${cur.toCreate[0]}) of (${[...cur.taken, ...cur.toCreate].join('.')}) to traverse the element ({${elementToString(cur.key ?? '', target)}})`);
}

// $rename sits at its destination: it copies the source's value there, then removes the source.
function applyRename(node: RenameNode, cur: Cursor, st: ApplyState): void {
  const source = findSource(node, st.root);
  if (source === undefined) return;
  const arrayAt = cur.taken.findIndex((_, i) => i < cur.taken.length - (cur.toCreate.length === 0 ? 1 : 0) && Array.isArray(valueAt(st.root, cur.taken.slice(0, i + 1))));
  if (arrayAt >= 0) {
    throw mongoError('BadValue', `The destination field cannot be an array element, '${node.to}' in doc with ${idElementString(st.root)} has an array field called '${cur.taken[arrayAt]}'`);
  }
  if (cur.toCreate.length === 0) {
    if (!valuesEqual(source.value, cur.value)) writeExisting(cur, source.value, st.isInsert);
  } else {
    createAt(cur, source.value, st.isInsert);
  }
  if (node.from[0] === '_id') {
    throw mongoError('ImmutableField', `Unsetting the path '${node.from.join('.')}' using $rename would modify the immutable field '_id'`);
  }
  delete source.parent[node.from[node.from.length - 1]!];
}

function valueAt(root: Doc, parts: readonly string[]): unknown {
  let v: unknown = root;
  for (const p of parts) v = childOf(v, p);
  return v;
}

function findSource(node: RenameNode, root: Doc): { value: unknown; parent: Doc } | undefined {
  const path = node.from.join('.');
  let container: unknown = root;
  for (let i = 0; i < node.from.length; i++) {
    const part = node.from[i]!;
    if (!isPlainObject(container) && !(Array.isArray(container) && arrayIndexOfPart(part) !== undefined)) {
      throw mongoError('PathNotViable', `cannot use the part (${part} of ${path}) to traverse the element ({${elementToString(node.from[i - 1]!, container)}})`);
    }
    const next = childOf(container, part);
    if (next === undefined) return undefined;
    container = next;
  }
  const arrayAt = node.from.findIndex((_, j) => j < node.from.length - 1 && Array.isArray(valueAt(root, node.from.slice(0, j + 1))));
  if (arrayAt >= 0) {
    throw mongoError('BadValue', `The source field cannot be an array element, '${path}' in doc with ${idElementString(root)} has an array field called '${node.from[arrayAt]}'`);
  }
  return { value: container, parent: valueAt(root, node.from.slice(0, -1)) as Doc };
}
