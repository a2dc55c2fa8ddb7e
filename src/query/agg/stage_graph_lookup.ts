import { BSON } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { activeStringComparator } from '../../bson/collation.js';
import { bsonTag, isNumber, isPlainObject, Long, toDouble, type Doc } from '../../bson/values.js';
import { compileFilter } from '../match/matcher.js';
import { groupKey } from './group_key.js';
import { fail } from './operator_support.js';
import { compileDocExpression, setAtPath, type Stage, type StageParser } from './stage_support.js';

// $graphLookup: a breadth-first search of `from`, starting from the values `startWith` gives each
// input document. Each round reads the documents whose connectToField equals a value of the
// frontier (with a query's equality, so the collation in force applies), and the next frontier is
// the connectFromField values of the documents seen for the first time. Documents are told apart
// by _id; each is reported once, at the depth it was first reached.

const REQUIRED = "$graphLookup requires 'from', 'as', 'startWith', 'connectFromField', and 'connectToField' to be specified.";
const STRING_ARGS = new Set(['from', 'as', 'connectFromField', 'connectToField', 'depthField']);
// MongoDB's internalDocumentSourceGraphLookupMaxMemoryBytes.
const MAX_MEMORY_BYTES = 100 * 1024 * 1024;

interface GraphLookupSpec {
  from: string;
  as: string[];
  connectFromField: string[];
  connectToField: string[];
  startWith: unknown;
  depthField?: string[];
  maxDepth?: number;
  restrictSearchWithMatch?: Doc;
}

function fieldPath(v: string): string[] {
  const parts = v.split('.');
  for (const p of parts) {
    if (p === '') fail(15998, 'FieldPath field names may not be empty strings.');
    if (p.startsWith('$')) fail(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.");
  }
  return parts;
}

// What MongoDB checks before the stage itself is parsed: the shape and the foreign namespace.
function checkFrom(spec: unknown): asserts spec is Doc {
  if (!isPlainObject(spec)) fail(ErrorCodes.FailedToParse, `the $graphLookup stage specification must be an object, but found ${bsonTypeName(spec)}`);
  if (!('from' in spec)) fail(ErrorCodes.FailedToParse, `missing 'from' option to $graphLookup stage specification: ${JSON.stringify(spec)}`);
  const from = spec.from;
  if (typeof from !== 'string') fail(ErrorCodes.FailedToParse, `$graphLookup 'from' field must be a string, but found ${bsonTypeName(from)}`);
  if (from === '' || from.startsWith('.') || from.includes('\0') || from.includes('$')) fail(ErrorCodes.InvalidNamespace, `invalid $graphLookup namespace: ${from}`);
}

function parseMaxDepth(v: unknown): number {
  if (!isNumber(v)) fail(40100, `maxDepth must be numeric, found type: ${bsonTypeName(v)}`);
  const n = toDouble(v);
  const truncated = Number.isNaN(n) ? 0 : Math.trunc(n);
  if (truncated < 0) fail(40101, `maxDepth requires a nonnegative argument, found: ${truncated}`);
  if (truncated !== n) fail(40102, `maxDepth could not be represented as a long long: ${truncated}`);
  return truncated;
}

// The operators a lookup's restriction may not hold, as MongoDB's parser bans them there.
function checkRestriction(filter: Doc): void {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    if (!isPlainObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if (k === '$where' || k === '$text') restrictionError(`${k} is not allowed in this context`);
      if (k === '$near' || k === '$nearSphere') restrictionError('$geoNear, $near, and $nearSphere are not allowed in this context');
      if (k !== '$expr') visit(x);
    }
  };
  visit(filter);
}

function restrictionError(reason: string, code: number = ErrorCodes.BadValue): never {
  throw new MongoError(code, `Failed to parse 'restrictSearchWithMatch' option to $graphLookup :: caused by :: ${reason}`);
}

function parseGraphLookupSpec(spec: unknown, varNames: string[]): GraphLookupSpec {
  checkFrom(spec);
  const strings: Record<string, string> = {};
  let startWith: unknown;
  let hasStartWith = false;
  let maxDepth: number | undefined;
  let restrict: Doc | undefined;
  let depthField: string[] | undefined;
  for (const [name, value] of Object.entries(spec)) {
    if (name === 'startWith') {
      startWith = value;
      hasStartWith = true;
    } else if (name === 'maxDepth') {
      maxDepth = parseMaxDepth(value);
    } else if (name === 'restrictSearchWithMatch') {
      if (!isPlainObject(value)) fail(40185, `restrictSearchWithMatch must be an object, found ${bsonTypeName(value)}`);
      checkRestriction(value);
      try {
        compileFilter(value, { variables: Object.fromEntries(varNames.map((n) => [n, null])) });
      } catch (err) {
        if (err instanceof MongoError) restrictionError(err.message, err.code);
        throw err;
      }
      restrict = value;
    } else if (STRING_ARGS.has(name)) {
      if (typeof value !== 'string') fail(40103, `expected string as argument for ${name}, found: ${bsonTypeName(value)}`);
      strings[name] = value;
      if (name === 'depthField') depthField = fieldPath(value);
    } else {
      fail(40104, `Unknown argument to $graphLookup: ${name}`);
    }
  }
  const { from, as, connectFromField, connectToField } = strings;
  if (!from || !as || !hasStartWith || !connectFromField || !connectToField) fail(40105, REQUIRED);
  return {
    from, as: fieldPath(as), connectFromField: fieldPath(connectFromField), connectToField: fieldPath(connectToField), startWith,
    ...(depthField === undefined ? {} : { depthField }),
    ...(maxDepth === undefined ? {} : { maxDepth }),
    ...(restrict === undefined ? {} : { restrictSearchWithMatch: restrict }),
  };
}

// Every value a path reaches, arrays along it and at its end opened, as a query's equality reads
// a document (MongoDB's visitAllValuesAtPath).
function valuesAtPath(value: unknown, path: readonly string[], from = 0, out: unknown[] = []): unknown[] {
  if (from === path.length) {
    if (Array.isArray(value)) out.push(...value);
    else if (value !== undefined) out.push(value);
    return out;
  }
  if (Array.isArray(value)) {
    for (const e of value) if (isPlainObject(e)) valuesAtPath(e, path, from, out);
  } else if (isPlainObject(value)) {
    valuesAtPath(value[path[from]!], path, from + 1, out);
  }
  return out;
}

// The query one round of the search runs against `from`: the restriction, the frontier as an $in,
// and, when the frontier holds null (which $in also matches against a missing field), that the
// field exists, since a document without connectToField connects to nothing.
function roundFilter(spec: GraphLookupSpec, frontier: unknown[]): Doc {
  const path = spec.connectToField.join('.');
  const clauses: Doc[] = [];
  if (spec.restrictSearchWithMatch !== undefined) clauses.push(spec.restrictSearchWithMatch);
  clauses.push({ [path]: { $in: frontier } });
  if (frontier.some((v) => v === null)) clauses.push({ [path]: { $exists: true } });
  return { $and: clauses };
}

// The foreign documents by the values of their connectToField (each value an array holds, and the
// array itself, as a query's equality reaches them), so that a round reads only the documents
// that may match its frontier; the round's filter still decides. Strings compared under a
// collation, and regular expressions (which $in matches as patterns), are not found by value:
// then every document is a candidate.
class ForeignDocuments {
  private byValue: Map<string, number[]> | undefined;

  constructor(readonly docs: readonly Doc[], private readonly path: readonly string[]) {}

  candidates(frontier: readonly unknown[]): Iterable<Doc> {
    if (activeStringComparator() !== undefined || frontier.some((v) => bsonTag(v) === 'BSONRegExp')) return this.docs;
    const index = this.byValue ??= this.indexByValue();
    const positions = new Set<number>();
    for (const v of frontier) for (const i of index.get(groupKey(v)) ?? []) positions.add(i);
    return [...positions].sort((a, b) => a - b).map((i) => this.docs[i]!);
  }

  private indexByValue(): Map<string, number[]> {
    const index = new Map<string, number[]>();
    this.docs.forEach((doc, i) => {
      const keys = new Set<string>();
      for (const v of valuesAtPath(doc, this.path)) keys.add(groupKey(v));
      for (const v of leafArrays(doc, this.path)) keys.add(groupKey(v));
      for (const key of keys) {
        let list = index.get(key);
        if (list === undefined) index.set(key, (list = []));
        list.push(i);
      }
    });
    return index;
  }
}

// The arrays a path ends at, which an equality with an array value matches whole.
function leafArrays(value: unknown, path: readonly string[], from = 0, out: unknown[] = []): unknown[] {
  if (from === path.length) {
    if (Array.isArray(value)) out.push(value);
  } else if (Array.isArray(value)) {
    for (const e of value) if (isPlainObject(e)) leafArrays(e, path, from, out);
  } else if (isPlainObject(value)) {
    leafArrays(value[path[from]!], path, from + 1, out);
  }
  return out;
}

function search(spec: GraphLookupSpec, foreign: ForeignDocuments, start: unknown, vars: Record<string, unknown>): Doc[] {
  const visited = new Map<string, Doc>();
  let bytes = 0;
  let frontier = dedupe(Array.isArray(start) ? start : start === undefined ? [] : [start]);
  for (let depth = 0; frontier.length > 0 && (spec.maxDepth === undefined || depth <= spec.maxDepth); depth++) {
    const matcher = compileFilter(roundFilter(spec, frontier), { variables: vars });
    const next: unknown[] = [];
    for (const doc of foreign.candidates(frontier)) {
      if (!matcher.matches(doc)) continue;
      if (doc._id === undefined) fail(40271, `Documents in the '${spec.from}' namespace must contain an _id for de-duplication in $graphLookup`);
      const id = groupKey(doc._id);
      if (visited.has(id)) continue;
      const found = spec.depthField === undefined ? doc : setAtPath(doc, spec.depthField, Long.fromNumber(depth));
      bytes += BSON.calculateObjectSize(found);
      if (bytes >= MAX_MEMORY_BYTES) fail(40099, '$graphLookup reached maximum memory consumption');
      visited.set(id, found);
      next.push(...valuesAtPath(doc, spec.connectFromField));
    }
    frontier = dedupe(next);
  }
  return [...visited.values()];
}

function dedupe(values: unknown[]): unknown[] {
  const seen = new Map<string, unknown>();
  for (const v of values) if (v !== undefined) seen.set(groupKey(v), v);
  return [...seen.values()];
}

export const parseGraphLookup: StageParser = (raw, env): Stage => {
  const spec = parseGraphLookupSpec(raw, env.varNames);
  const startWith = compileDocExpression(spec.startWith, env);
  // A router runs the stage once per document over the collection it read beforehand, which
  // readCollection hands out as the same array each time: looked up by value once, not per document.
  let last: { source: Iterable<Doc>; foreign: ForeignDocuments } | undefined;
  const foreignDocuments = (): ForeignDocuments => {
    const source = env.ctx.readCollection(spec.from);
    if (last?.source !== source || !Array.isArray(source)) last = { source, foreign: new ForeignDocuments([...source], spec.connectToField) };
    return last.foreign;
  };
  return function* (input, vars) {
    let foreign: ForeignDocuments | undefined;
    for (const doc of input) {
      foreign ??= foreignDocuments();
      yield setAtPath(doc, spec.as, search(spec, foreign, startWith(doc, vars), vars));
    }
  };
};

// The stage as MongoDB's explain shows it: the options it holds (maxDepth as a long), and a
// directly following $unwind of its `as` field folded in as `unwinding`, as MongoDB's optimizer
// absorbs it.
export function explainGraphLookup(stage: Doc, following: Doc | undefined): { explained: Doc; absorbed: boolean } {
  const spec = stage.$graphLookup as Doc;
  const out: Doc = {
    from: spec.from, as: spec.as, connectToField: spec.connectToField, connectFromField: spec.connectFromField, startWith: spec.startWith,
  };
  if (spec.depthField !== undefined) out.depthField = spec.depthField;
  if (spec.maxDepth !== undefined) out.maxDepth = Long.fromNumber(toDouble(spec.maxDepth));
  if (spec.restrictSearchWithMatch !== undefined) out.restrictSearchWithMatch = spec.restrictSearchWithMatch;
  const unwind = following?.$unwind;
  const unwindSpec = typeof unwind === 'string' ? { path: unwind } : isPlainObject(unwind) ? unwind : undefined;
  const absorbed = unwindSpec !== undefined && unwindSpec.path === `$${String(spec.as)}`;
  if (absorbed) {
    out.unwinding = { preserveNullAndEmptyArrays: unwindSpec.preserveNullAndEmptyArrays === true };
    if (typeof unwindSpec.includeArrayIndex === 'string') (out.unwinding as Doc).includeArrayIndex = unwindSpec.includeArrayIndex;
  }
  return { explained: { $graphLookup: out }, absorbed };
}
