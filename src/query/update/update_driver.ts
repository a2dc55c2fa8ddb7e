import { mongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { cloneValue, isPlainObject, type Doc } from '../../bson/values.js';
import { applyTree } from './apply_tree.js';
import { parseArrayFilters, type ArrayFilterMatchers } from './array_filters.js';
import { elementToString, valueToString } from './bson_string.js';
import { checkPositionalParts, isDynamicPath, parseUpdatePath } from './field_ref.js';
import { identical } from './identical.js';
import { MODIFIERS } from './modifier_table.js';
import { operationTime } from './modifier_node.js';
import { replaceDocument } from './object_replace.js';
import { applyPipelineUpdate, checkUpdatePipeline } from './pipeline_update.js';
import { validateForStorage } from './storage_validation.js';
import { insertLeaf, objectNode, type IdentifierScope, type LeafNode, type ObjectNode } from './update_node.js';
import { extractEqualities, seedDocument } from './upsert_document.js';

export interface UpdateContext {
  matchDetails?: { elemMatchKey?: string };
  isUpsertInsert: boolean;
  // $currentDate's and $$NOW's time: the operation's, from its process's clock. A node's writes to
  // its own collections (LocalWriter) give none, and use neither.
  now?: Date;
}

export interface UpdateResult {
  doc: Doc;
  modified: boolean;
}

export interface CompiledUpdate {
  readonly kind: 'replacement' | 'operators' | 'pipeline';
  apply(doc: Doc, ctx: UpdateContext): UpdateResult;
}

export interface UpdateOptions {
  arrayFilters?: Doc[];
  variables?: Record<string, unknown>;
}

export function compileUpdate(update: Doc | Doc[], options: UpdateOptions = {}): CompiledUpdate {
  const filters = parseArrayFilters(options.arrayFilters, options.variables);
  if (Array.isArray(update)) {
    if (filters.size > 0) throw mongoError('FailedToParse', 'arrayFilters may not be specified for pipeline-style updates');
    checkUpdatePipeline(update);
    return {
      kind: 'pipeline',
      apply: (doc, ctx) => result(doc, applyPipelineUpdate(update, doc, options.variables, operationTime(ctx.now))),
    };
  }
  if (!isPlainObject(update)) throw mongoError('FailedToParse', 'Update argument must be either an object or an array');
  const first = Object.keys(update)[0];
  if (first === undefined || !first.startsWith('$')) {
    return { kind: 'replacement', apply: (doc, ctx) => result(doc, replaceDocument(doc, update, ctx.isUpsertInsert)) };
  }
  const root = parseOperators(update, filters, options.variables);
  return {
    kind: 'operators',
    apply: (doc, ctx) => {
      const out = cloneValue(doc);
      applyTree(root, out, {
        root: out,
        isInsert: ctx.isUpsertInsert,
        now: ctx.now,
        matchedField: ctx.matchDetails?.elemMatchKey,
        arrayFilters: filters,
      });
      if (ctx.isUpsertInsert || !identical(out._id, doc._id)) validateForStorage({ _id: out._id }, true);
      return result(doc, out);
    },
  };
}

function result(before: Doc, after: Doc): UpdateResult {
  return { doc: after, modified: !identical(before, after) };
}

function parseOperators(update: Doc, filters: ArrayFilterMatchers, variables?: Record<string, unknown>): ObjectNode {
  const root = objectNode();
  const scope: IdentifierScope = { defined: new Set(filters.keys()), used: new Set() };
  for (const [op, fields] of Object.entries(update)) {
    const factory = MODIFIERS.get(op);
    if (factory === undefined && op !== '$rename') {
      throw mongoError('FailedToParse', `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`);
    }
    if (!isPlainObject(fields)) {
      throw mongoError('FailedToParse', `Modifiers operate on fields but we found type ${bsonTypeName(fields)} instead. For example: {$mod: {<field>: ...}} not {${elementToString(op, fields)}}`);
    }
    for (const [path, arg] of Object.entries(fields)) {
      if (op === '$rename') parseRename(root, path, arg, scope);
      else insert(root, path, factory!(lastPart(path), arg, variables), scope);
    }
  }
  for (const identifier of scope.defined) {
    if (!scope.used.has(identifier)) {
      throw mongoError('FailedToParse', `The array filter for identifier '${identifier}' was not used in the update ${valueToString(update)}`);
    }
  }
  return root;
}

function lastPart(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1);
}

function insert(root: ObjectNode, path: string, leaf: LeafNode, scope: IdentifierScope): void {
  const parts = parseUpdatePath(path);
  checkPositionalParts(parts, path);
  insertLeaf(root, parts, leaf, scope);
}

// The checks run in MongoDB's order: the source path, the type of the destination, then the
// destination path and how the two relate.
function parseRename(root: ObjectNode, from: string, to: unknown, scope: IdentifierScope): void {
  const fromParts = parseUpdatePath(from);
  checkPositionalParts(fromParts, from);
  insertLeaf(root, fromParts, { kind: 'placeholder' }, scope);
  if (typeof to !== 'string') throw mongoError('BadValue', `The 'to' field for $rename must be a string: ${elementToString(from, to)}`);
  const toParts = parseUpdatePath(to);
  checkPositionalParts(toParts, to);
  const spec = elementToString(from, to);
  if (from === to) throw mongoError('BadValue', `The source and target field for $rename must differ: ${spec}`);
  if (to.startsWith(`${from}.`) || from.startsWith(`${to}.`)) {
    throw mongoError('BadValue', `The source and target field for $rename must not be on the same path: ${spec}`);
  }
  if (isDynamicPath(fromParts)) throw mongoError('BadValue', `The source field for $rename may not be dynamic: ${from}`);
  if (isDynamicPath(toParts)) throw mongoError('BadValue', `The destination field for $rename may not be dynamic: ${to}`);
  insertLeaf(root, toParts, { kind: 'rename', from: fromParts, to }, scope);
}

// The document an upsert inserts when its query matched nothing. A replacement keeps only the
// query's _id; operators and pipelines start from every equality the query pins down.
export function upsertDocument(query: Doc, update: CompiledUpdate, ctx: { now?: Date } = {}): Doc {
  const equalities = extractEqualities(query);
  if (update.kind === 'replacement') {
    for (const path of [...equalities.keys()]) if (path !== '_id') equalities.delete(path);
  }
  const seed = seedDocument(equalities);
  const { doc } = update.apply(seed, { isUpsertInsert: true, now: ctx.now });
  if (doc._id === undefined) return doc;
  const { _id, ...rest } = doc;
  return { _id, ...rest };
}
