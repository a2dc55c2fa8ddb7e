import { MongoError } from '../../base/errors.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { compileExpression, isExpressionOperator } from '../agg/expression.js';
import { parseFilter } from '../match/expression_parser.js';
import { describeValue } from '../match/describe_value.js';
import type { MetaName, ParsedProjection, PathNode, ProjectionNode } from './projection_ast.js';

// Follows MongoDB's projection_parser: each element is an inclusion, an exclusion, a literal or
// expression, a find-only operator, or a nested sub-projection; the first inclusion or exclusion
// fixes the projection's type and a later element of the other kind is an error.

interface ParseContext {
  filter: Doc | undefined;
  idSpecified: boolean;
  hasPositional: boolean;
  hasElemMatch: boolean;
  hasFindSlice: boolean;
  type: 'inclusion' | 'exclusion' | undefined;
  idIncludedEntirely: boolean;
  idExcludedEntirely: boolean;
  slices: ParsedProjection['slices'];
  positional: string[] | undefined;
  metas: Set<MetaName>;
}

function fail(code: number, message: string): never {
  throw new MongoError(code, message);
}

export function parseProjection(spec: Doc, filter?: Doc): ParsedProjection {
  const root: PathNode = { kind: 'path', children: new Map() };
  const ctx: ParseContext = {
    filter, idSpecified: false, hasPositional: false, hasElemMatch: false, hasFindSlice: false, type: undefined,
    idIncludedEntirely: false, idExcludedEntirely: false, slices: [], positional: undefined, metas: new Set(),
  };
  for (const key of Object.keys(spec)) {
    if (spec[key] === undefined) continue;
    ctx.idSpecified ||= key === '_id' || key.startsWith('_id.');
    parseElement(ctx, key, spec[key], [], root);
  }
  const type = ctx.type ?? defaultType(ctx);
  if (!ctx.idSpecified && type === 'inclusion') root.children.set('_id', { kind: 'boolean', include: true });
  if (type === 'exclusion' && ctx.idIncludedEntirely) root.children.delete('_id');
  return { root, isInclusion: type === 'inclusion', slices: ctx.slices, positional: ctx.positional, metas: ctx.metas };
}

// Projections made only of _id, $meta and find-only operators have no inclusion or exclusion to
// decide their type; MongoDB keeps these rules for compatibility ($meta alone is an exclusion).
function defaultType(ctx: ParseContext): 'inclusion' | 'exclusion' {
  if (ctx.hasFindSlice) return ctx.idIncludedEntirely ? 'inclusion' : 'exclusion';
  if (ctx.hasElemMatch) return 'inclusion';
  return ctx.idIncludedEntirely ? 'inclusion' : 'exclusion';
}

function firstPositional(name: string): { begin: number; end: number } | undefined {
  const inner = name.indexOf('.$.');
  if (inner !== -1) return { begin: inner, end: inner + 3 };
  if (name.endsWith('.$')) return { begin: name.length - 2, end: name.length };
  if (name === '$') return { begin: 0, end: 1 };
  return undefined;
}

function fieldPath(name: string): string[] {
  const parts = name.split('.');
  for (const part of parts) {
    if (part === '') fail(15998, 'FieldPath field names may not be empty strings.');
    if (part.startsWith('$')) fail(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.");
  }
  return parts;
}

function addNodeAtPath(parent: PathNode, path: string[], node: ProjectionNode): void {
  let current = parent;
  for (let i = 0; i < path.length - 1; i++) {
    const existing = current.children.get(path[i]!);
    if (existing === undefined) {
      const created: PathNode = { kind: 'path', children: new Map() };
      current.children.set(path[i]!, created);
      current = created;
    } else if (existing.kind === 'path') {
      current = existing;
    } else {
      fail(31249, `Path collision at ${path.join('.')} remaining portion ${path.slice(i + 1).join('.')}`);
    }
  }
  const last = path[path.length - 1]!;
  if (current.children.has(last)) fail(31250, `Path collision at ${path.join('.')}`);
  current.children.set(last, node);
}

function isInclusionOrExclusionValue(value: unknown): boolean {
  return typeof value === 'boolean' || isNumber(value);
}

function parseElement(ctx: ParseContext, name: string, value: unknown, parentPath: string[], parent: PathNode): void {
  const positional = firstPositional(name);
  if (isPlainObject(value)) {
    if (positional) fail(31271, 'positional projection cannot be used with an expression or sub object');
    parseSubObject(ctx, name, value, parentPath, parent);
  } else if (isInclusionOrExclusionValue(value)) {
    const truthy = typeof value === 'boolean' ? value : toDouble(value) !== 0;
    if (truthy) parseInclusion(ctx, name, parentPath, parent, positional);
    else parseExclusion(ctx, name, parentPath, parent);
  } else {
    if (positional) fail(31308, 'positional projection cannot be used with a literal');
    const path = fieldPath(name);
    const evaluate = compileExpression(value);
    addNodeAtPath(parent, path, { kind: 'expression', evaluate });
    if (ctx.type === 'exclusion') fail(31310, `Cannot use an expression ${name}: ${describeValue(value)} in an exclusion projection`);
    ctx.type = 'inclusion';
  }
}

function parseInclusion(ctx: ParseContext, name: string, parentPath: string[], parent: PathNode, positional: { begin: number; end: number } | undefined): void {
  const isTopLevelId = name === '_id' && parentPath.length === 0;
  if (positional === undefined) {
    addNodeAtPath(parent, fieldPath(name), { kind: 'boolean', include: true });
    if (isTopLevelId) ctx.idIncludedEntirely = true;
  } else {
    if (ctx.hasPositional) fail(31276, 'Cannot specify more than one positional projection per query.');
    if (ctx.hasElemMatch) fail(31256, 'Cannot specify positional operator and $elemMatch.');
    const matchField = parentPath.length > 0 ? parentPath[0]! : name.split('.')[0]!;
    if (ctx.filter !== undefined && !filterMentions(ctx.filter, matchField)) {
      fail(31277, `Positional projection '${name}' does not match the query document.`);
    }
    if (name.endsWith('.$.')) fail(31270, "Path cannot end with '.$.'");
    const rest = name.slice(positional.end);
    if (firstPositional(rest) !== undefined || rest === '$') fail(31287, `Cannot use positional operator twice: ${name}`);
    const path = fieldPath(name.slice(0, positional.begin));
    addNodeAtPath(parent, path, { kind: 'positional' });
    ctx.positional = [...parentPath, ...path];
    ctx.hasPositional = true;
  }
  if (!isTopLevelId) {
    if (ctx.type === 'exclusion') fail(31253, `Cannot do inclusion on field ${name} in exclusion projection`);
    ctx.type = 'inclusion';
  }
}

// _id may be excluded from an inclusion projection; any other exclusion makes it an exclusion.
function parseExclusion(ctx: ParseContext, name: string, parentPath: string[], parent: PathNode): void {
  addNodeAtPath(parent, fieldPath(name), { kind: 'boolean', include: false });
  if (name === '_id' && parentPath.length === 0) {
    ctx.idExcludedEntirely = true;
    return;
  }
  if (ctx.type === 'inclusion') fail(31254, `Cannot do exclusion on field ${name} in inclusion projection`);
  ctx.type = 'exclusion';
}

function parseSubObject(ctx: ParseContext, name: string, obj: Doc, parentPath: string[], parent: PathNode): void {
  const keys = Object.keys(obj);
  if (keys.length === 1 && keys[0]!.startsWith('$')) {
    const op = keys[0]!;
    const arg = obj[op];
    if (op === '$slice') return parseSlice(ctx, name, arg, parentPath, parent);
    if (op === '$elemMatch') return parseElemMatch(ctx, name, arg, parentPath, parent);
    if (op === '$meta') return parseMeta(ctx, name, arg, parentPath, parent);
    if (op === '$literal' || isExpressionOperator(op)) return parseExpressionObject(ctx, name, obj, parent);
    fail(31325, `Unknown expression ${op}`);
  }
  const path = fieldPath(name);
  const node: PathNode = { kind: 'path', children: new Map() };
  addNodeAtPath(parent, path, node);
  for (const key of keys) {
    if (obj[key] === undefined) continue;
    parseElement(ctx, key, obj[key], [...parentPath, ...path], node);
  }
}

// The $meta names MongoDB knows. Search scores and random values belong to stages docshard does
// not have, so they are never available: they are left out of the result as mongod leaves out
// metadata a query does not produce. textScore is there when the query has $text (the find
// refuses it otherwise, as mongod does), the geoNear ones when it has $near.
const UNAVAILABLE_METAS = new Set(['randVal', 'searchScore', 'searchHighlights', 'searchScoreDetails', 'vectorSearchScore', 'searchSortValues', 'searchSequenceToken', 'timeseriesBucketMinTime', 'timeseriesBucketMaxTime']);
const AVAILABLE_METAS = new Set<string>(['indexKey', 'recordId', 'sortKey', 'textScore', 'geoNearDistance', 'geoNearPoint'] satisfies MetaName[]);

// Names mongos and the showRecordId option give the fields they add; mongod accepts them at the
// top level for $meta values only.
const META_FIELDS = new Set(['$recordId', '$sortKey']);

// {$meta: name} is allowed in exclusion projections too, and does not decide the projection's type.
function parseMeta(ctx: ParseContext, name: string, arg: unknown, parentPath: string[], parent: PathNode): void {
  if (typeof arg !== 'string') fail(17307, '$meta only supports String arguments');
  if (!AVAILABLE_METAS.has(arg) && !UNAVAILABLE_METAS.has(arg)) fail(17308, `Unsupported argument to $meta: ${arg}`);
  const path = parentPath.length === 0 && META_FIELDS.has(name) ? [name] : fieldPath(name);
  if (!AVAILABLE_METAS.has(arg)) {
    addNodeAtPath(parent, path, { kind: 'expression', evaluate: () => undefined });
    return;
  }
  addNodeAtPath(parent, path, { kind: 'meta', name: arg as MetaName });
  ctx.metas.add(arg as MetaName);
}

function parseExpressionObject(ctx: ParseContext, name: string, obj: Doc, parent: PathNode): void {
  if (ctx.type === 'exclusion') fail(31252, 'Cannot use expression other than $meta in exclusion projection');
  ctx.type = 'inclusion';
  addNodeAtPath(parent, fieldPath(name), { kind: 'expression', evaluate: compileExpression(obj) });
}

function int32Of(value: unknown): number {
  const d = Math.trunc(toDouble(value));
  if (Number.isNaN(d)) return 0;
  return Math.max(-2147483648, Math.min(2147483647, d));
}

function findSliceArgs(arg: unknown): { skip: number | undefined; limit: number } {
  if (isNumber(arg)) return { skip: undefined, limit: int32Of(arg) };
  if (Array.isArray(arg)) {
    if (arg.length !== 2) fail(31272, '$slice array argument should be of form [skip, limit]');
    const [skip, limit] = arg;
    if (!isNumber(skip)) fail(31257, `$slice expects the skip argument to be a number, got ${typeof skip}`);
    if (!isNumber(limit)) fail(31258, `$slice expects the limit argument to be a number, got ${typeof limit}`);
    if (int32Of(limit) <= 0) fail(31259, `$slice limit must be positive, got ${int32Of(limit)}`);
    return { skip: int32Of(skip), limit: int32Of(limit) };
  }
  return fail(31273, '$slice only supports numbers and [skip, limit] arrays');
}

// A find $slice that does not parse may still be the aggregation $slice expression.
function parseSlice(ctx: ParseContext, name: string, arg: unknown, parentPath: string[], parent: PathNode): void {
  let args: { skip: number | undefined; limit: number };
  try {
    args = findSliceArgs(arg);
  } catch (findError) {
    try {
      parseExpressionObject(ctx, name, { $slice: arg }, parent);
      return;
    } catch (exprError) {
      const f = findError as MongoError;
      const e = exprError as MongoError;
      throw new MongoError(e.code, `Invalid $slice syntax. The given syntax { $slice: ${describeValue(arg)} } did not match the find() syntax because :: Location${f.code}: ${f.message} :: The given syntax did not match the expression $slice syntax. :: caused by :: ${e.message}`);
    }
  }
  const path = fieldPath(name);
  addNodeAtPath(parent, path, { kind: 'slice', ...args });
  ctx.slices.push({ path: [...parentPath, ...path], ...args });
  ctx.hasFindSlice = true;
}

function parseElemMatch(ctx: ParseContext, name: string, arg: unknown, parentPath: string[], parent: PathNode): void {
  if (!isPlainObject(arg)) fail(31274, `elemMatch: Invalid argument, object required, but got ${describeValue(arg)}`);
  if (ctx.hasPositional) fail(31255, 'Cannot specify positional operator and $elemMatch.');
  if (parentPath.length > 0 || name.includes('.')) fail(31275, 'Cannot use $elemMatch projection on a nested field.');
  const node = parseFilter({ [name]: { $elemMatch: arg } }, { jsonSchema: false });
  addNodeAtPath(parent, [name], { kind: 'elemMatch', matches: (element) => node({ [name]: [element] }) });
  ctx.hasElemMatch = true;
}

// MongoDB accepts a positional projection only when some path of the query starts with the
// projected field (looking through $and/$or/$nor).
function filterMentions(filter: Doc, field: string): boolean {
  for (const key of Object.keys(filter)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      const entries = filter[key];
      if (Array.isArray(entries) && entries.some((e) => isPlainObject(e) && filterMentions(e, field))) return true;
    } else if (!key.startsWith('$') && key.split('.')[0] === field) {
      return true;
    }
  }
  return false;
}
