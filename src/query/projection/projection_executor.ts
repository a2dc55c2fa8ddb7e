import { MongoError } from '../../base/errors.js';
import { cloneValue, isPlainObject, type Doc } from '../../bson/values.js';
import { arrayIndexOf } from '../path.js';
import { hasComputedFields, type MetaName, type PathNode, type ResultMetadata } from './projection_ast.js';

// Inclusion: fields named by the projection are kept in the order of the input document, then
// computed fields are added in the order of the projection (MongoDB's InclusionNode).
export function applyInclusion(node: PathNode, input: Doc, root: Doc, meta: ResultMetadata): Doc {
  const out = projectIncluded(node, input);
  addComputedFields(node, out, root, meta);
  return out;
}

// Below an included path, arrays are projected element by element and scalars drop out.
function includeInValue(node: PathNode, value: unknown): unknown {
  if (isPlainObject(value)) return projectIncluded(node, value);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const element of value) {
      const projected = includeInValue(node, element);
      if (projected !== undefined) out.push(projected);
    }
    return out;
  }
  return undefined;
}

function projectIncluded(node: PathNode, input: Doc): Doc {
  const out: Doc = {};
  for (const key of Object.keys(input)) {
    const child = node.children.get(key);
    const value = input[key];
    if (child === undefined || value === undefined) continue;
    if (child.kind === 'path') {
      const projected = includeInValue(child, value);
      if (projected !== undefined) out[key] = projected;
    } else if ((child.kind === 'boolean' && child.include) || child.kind === 'slice' || child.kind === 'positional') {
      out[key] = cloneValue(value);
    }
  }
  return out;
}

function addComputedFields(node: PathNode, out: Doc, root: Doc, meta: ResultMetadata): void {
  for (const [key, child] of node.children) {
    if (child.kind === 'expression') {
      const value = child.evaluate(root);
      if (value === undefined) delete out[key];
      else out[key] = cloneValue(value);
    } else if (child.kind === 'elemMatch') {
      setOrDelete(out, key, firstMatching(root[key], child.matches));
    } else if (child.kind === 'meta') {
      setOrDelete(out, key, meta[child.name]);
    } else if (child.kind === 'path' && hasComputedFields(child)) {
      out[key] = computedInValue(child, out[key], root, meta);
    }
  }
}

// A computed field below a scalar or missing value replaces it with a document (as in
// {"a.b": {$literal: 1}} applied to {a: 1}, which gives {a: {b: 1}}).
function computedInValue(node: PathNode, value: unknown, root: Doc, meta: ResultMetadata): unknown {
  if (Array.isArray(value)) return value.map((element) => computedInValue(node, element, root, meta));
  const out: Doc = isPlainObject(value) ? value : {};
  addComputedFields(node, out, root, meta);
  return out;
}

// The $meta fields (of the `names` given) of an exclusion projection, or of returnKey's key
// document: set where the projection puts them, a field at a time, so an existing field keeps its
// place.
export function applyMetaFields(node: PathNode, out: Doc, meta: ResultMetadata, names: ReadonlySet<MetaName>): void {
  for (const [key, child] of node.children) {
    if (child.kind === 'meta') {
      if (names.has(child.name)) setOrDelete(out, key, meta[child.name]);
    } else if (child.kind === 'path' && hasMetaFields(child, names)) {
      const inner: Doc = isPlainObject(out[key]) ? out[key] : {};
      applyMetaFields(child, inner, meta, names);
      out[key] = inner;
    }
  }
}

function hasMetaFields(node: PathNode, names: ReadonlySet<MetaName>): boolean {
  for (const child of node.children.values()) {
    if (child.kind === 'meta' ? names.has(child.name) : child.kind === 'path' && hasMetaFields(child, names)) return true;
  }
  return false;
}

// Exclusion: everything is kept except the excluded paths; arrays are entered element by element.
export function applyExclusion(node: PathNode, input: Doc): Doc {
  const out: Doc = {};
  for (const key of Object.keys(input)) {
    const child = node.children.get(key);
    const value = input[key];
    if (value === undefined) continue;
    if (child === undefined || child.kind === 'slice') out[key] = cloneValue(value);
    else if (child.kind === 'path') out[key] = excludeInValue(child, value);
    else if (child.kind === 'boolean' && child.include) out[key] = cloneValue(value);
  }
  return out;
}

function excludeInValue(node: PathNode, value: unknown): unknown {
  if (isPlainObject(value)) return applyExclusion(node, value);
  if (Array.isArray(value)) return value.map((element) => excludeInValue(node, element));
  return cloneValue(value);
}

export function applyElemMatchFields(node: PathNode, out: Doc, root: Doc): void {
  for (const [key, child] of node.children) {
    if (child.kind === 'elemMatch') setOrDelete(out, key, firstMatching(root[key], child.matches));
  }
}

function firstMatching(value: unknown, matches: (element: unknown) => boolean): unknown[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const index = value.findIndex((element) => matches(element));
  return index === -1 ? undefined : [cloneValue(value[index])];
}

function setOrDelete(out: Doc, key: string, value: unknown): void {
  if (value === undefined) delete out[key];
  else out[key] = value;
}

// Find's $slice: applied at the path of the projected document, through arrays of documents.
export function applySlice(container: unknown, path: string[], index: number, skip: number | undefined, limit: number): void {
  if (!isPlainObject(container)) return;
  const key = path[index]!;
  const value = container[key];
  if (index === path.length - 1) {
    if (Array.isArray(value)) container[key] = sliceArray(value, skip, limit);
    return;
  }
  sliceInValue(value, path, index + 1, skip, limit);
}

function sliceInValue(value: unknown, path: string[], index: number, skip: number | undefined, limit: number): void {
  if (Array.isArray(value)) for (const element of value) sliceInValue(element, path, index, skip, limit);
  else applySlice(value, path, index, skip, limit);
}

function sliceArray(array: unknown[], skip: number | undefined, limit: number): unknown[] {
  if (skip === undefined) return limit >= 0 ? array.slice(0, limit) : array.slice(Math.max(0, array.length + limit));
  const start = skip >= 0 ? skip : Math.max(0, array.length + skip);
  return array.slice(start, start + limit);
}

// The positional `$`: the first array along the path becomes the one element the query matched.
export function applyPositional(out: Doc, path: string[], elemMatchKey: string | undefined): void {
  if (elemMatchKey === undefined) {
    throw new MongoError(51246, "positional operator '.$' couldn't find a matching element in the array");
  }
  const index = arrayIndexOf(elemMatchKey)!;
  let container: Doc = out;
  for (const key of path) {
    const value = container[key];
    if (Array.isArray(value)) {
      if (index >= value.length) throw new MongoError(51247, "positional operator '.$' element mismatch");
      container[key] = [value[index]];
      return;
    }
    if (!isPlainObject(value)) return;
    container = value;
  }
}
