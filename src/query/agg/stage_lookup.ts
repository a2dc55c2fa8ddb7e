import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { walkPath } from './expression.js';
import { groupKey } from './group_key.js';
import { fail } from './operator_support.js';
import { compileDocExpression, setAtPath, type CompiledPipeline, type DocEvaluator, type Stage, type StageEnv, type StageParser } from './stage_support.js';

// $lookup (equality form, pipeline form, or both) and $unionWith.

function collectionName(v: unknown, stage: string): string {
  if (typeof v === 'string') return v;
  if (isPlainObject(v) && typeof v.coll === 'string') return v.coll;
  return fail(ErrorCodes.FailedToParse, `${stage} 'from' field must be a string, but found ${bsonTypeName(v)}`);
}

// Every value a path reaches, arrays opened, as the equality match of $lookup sees them.
function valuesAt(doc: Doc, path: string[]): unknown[] {
  const v = walkPath(doc, path);
  const out: unknown[] = [];
  const visit = (x: unknown, depth: number): void => {
    if (Array.isArray(x) && depth < 2) {
      if (depth === 0) out.push(x);
      for (const e of x) visit(e, depth + 1);
    } else if (x !== undefined) {
      out.push(x);
    }
  };
  visit(v, 0);
  return out;
}

// Foreign documents indexed by every value of the foreign field (missing indexes as null).
function indexBy(docs: Doc[], path: string[]): Map<string, number[]> {
  const index = new Map<string, number[]>();
  docs.forEach((doc, i) => {
    const values = valuesAt(doc, path);
    const keys = new Set(values.length === 0 ? ['n'] : values.map(groupKey));
    for (const key of keys) {
      let list = index.get(key);
      if (list === undefined) index.set(key, (list = []));
      list.push(i);
    }
  });
  return index;
}

function localKeys(doc: Doc, path: string[]): string[] {
  const v = walkPath(doc, path);
  if (v === undefined || v === null) return ['n'];
  if (Array.isArray(v)) return v.length === 0 ? ['n'] : v.flatMap((e) => (Array.isArray(e) ? [groupKey(e), ...e.map(groupKey)] : [groupKey(e)]));
  return [groupKey(v)];
}

function splitFieldPath(v: unknown, what: string): string[] {
  if (typeof v !== 'string') fail(ErrorCodes.FailedToParse, `$lookup argument '${what}' must be a string, found ${bsonTypeName(v)}`);
  return v.split('.');
}

export const parseLookup: StageParser = (spec, env): Stage => {
  if (!isPlainObject(spec)) fail(ErrorCodes.FailedToParse, 'the $lookup specification must be an Object');
  const allowed = ['from', 'localField', 'foreignField', 'as', 'let', 'pipeline'];
  for (const key of Object.keys(spec)) {
    if (!allowed.includes(key)) fail(ErrorCodes.FailedToParse, `unknown argument to $lookup: ${key}`);
  }
  if (!('as' in spec)) fail(ErrorCodes.FailedToParse, "must specify 'as' field for a $lookup");
  const as = splitFieldPath(spec.as, 'as');
  const hasLocal = 'localField' in spec;
  const hasForeign = 'foreignField' in spec;
  if (hasLocal !== hasForeign) fail(ErrorCodes.FailedToParse, "$lookup requires both or neither of 'localField' and 'foreignField' to be specified");
  if (!hasLocal && !('pipeline' in spec)) fail(ErrorCodes.FailedToParse, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified");
  if ('let' in spec && !('pipeline' in spec)) fail(ErrorCodes.FailedToParse, "$lookup with 'let' must also specify 'pipeline'");
  const from = 'from' in spec ? collectionName(spec.from, '$lookup') : undefined;
  if (from === undefined && !startsWithDocuments(spec.pipeline)) fail(ErrorCodes.FailedToParse, "must specify 'from' field for a $lookup");
  const local = hasLocal ? splitFieldPath(spec.localField, 'localField') : undefined;
  const foreign = hasForeign ? splitFieldPath(spec.foreignField, 'foreignField') : undefined;
  const lets: [string, DocEvaluator][] = [];
  if ('let' in spec) {
    if (!isPlainObject(spec.let)) fail(ErrorCodes.FailedToParse, '$lookup argument \'let\' must be an object, is type ' + bsonTypeName(spec.let));
    for (const [name, expr] of Object.entries(spec.let)) {
      if (!/^[a-z\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*$/.test(name)) fail(16867, `'${name}' starts with an invalid character for a user variable name`);
      lets.push([name, compileDocExpression(expr, env)]);
    }
  }
  const sub: CompiledPipeline | undefined = 'pipeline' in spec
    ? env.compilePipeline(spec.pipeline, [...env.varNames, ...lets.map(([n]) => n)], 'lookup')
    : undefined;
  return function* (input, vars) {
    let foreignDocs: Doc[] | undefined;
    let index: Map<string, number[]> | undefined;
    for (const doc of input) {
      foreignDocs ??= from === undefined ? [] : [...env.ctx.readCollection(from)];
      let matched: Doc[] = foreignDocs;
      if (local !== undefined && foreign !== undefined) {
        index ??= indexBy(foreignDocs, foreign);
        const positions = new Set<number>();
        for (const key of localKeys(doc, local)) for (const i of index.get(key) ?? []) positions.add(i);
        matched = [...positions].sort((a, b) => a - b).map((i) => foreignDocs![i]!);
      }
      if (sub !== undefined) {
        const scope = { ...vars };
        for (const [name, evaluate] of lets) {
          const v = evaluate(doc, vars);
          scope[name] = v === undefined ? null : v;
        }
        matched = [...sub(matched, scope)];
      }
      yield setAtPath(doc, as, matched);
    }
  };
};

function startsWithDocuments(pipeline: unknown): boolean {
  return Array.isArray(pipeline) && isPlainObject(pipeline[0]) && '$documents' in pipeline[0];
}

export const parseUnionWith: StageParser = (spec, env: StageEnv): Stage => {
  let coll: string | undefined;
  let pipeline: unknown = [];
  if (typeof spec === 'string') {
    coll = spec;
  } else if (isPlainObject(spec)) {
    for (const key of Object.keys(spec)) {
      if (key !== 'coll' && key !== 'pipeline') fail(40415, `BSON field '$unionWith.${key}' is an unknown field.`);
    }
    if ('coll' in spec) {
      if (typeof spec.coll !== 'string') fail(ErrorCodes.FailedToParse, `$unionWith 'coll' must be a string, found ${bsonTypeName(spec.coll)}`);
      coll = spec.coll;
    }
    if ('pipeline' in spec) pipeline = spec.pipeline;
    if (coll === undefined && !startsWithDocuments(pipeline)) fail(ErrorCodes.FailedToParse, "$unionWith stage without explicit collection must have a pipeline with $documents as first stage");
  } else {
    return fail(ErrorCodes.FailedToParse, `the $unionWith stage specification must be an object or string, but found ${bsonTypeName(spec)}`);
  }
  const sub = env.compilePipeline(pipeline, env.varNames, 'unionWith');
  return function* (input, vars) {
    yield* input;
    yield* sub(coll === undefined ? [] : env.ctx.readCollection(coll), vars);
  };
};

export const parseFacet: StageParser = (spec, env): Stage => {
  if (!isPlainObject(spec)) fail(15947, 'the $facet specification must be a non-empty object');
  const names = Object.keys(spec);
  if (names.length === 0) fail(40169, 'the $facet specification must be a non-empty object');
  const facets = names.map((name) => {
    if (name === '' || name.startsWith('$') || name.includes('.')) fail(40352, `FieldPath field names may not start with '$' or contain '.': ${name}`);
    if (!Array.isArray(spec[name])) fail(40170, `arguments to $facet must be arrays, ${name} is type ${bsonTypeName(spec[name])}`);
    return [name, env.compilePipeline(spec[name], env.varNames, 'facet')] as const;
  });
  return function* (input, vars) {
    const all = [...input];
    const out: Doc = {};
    for (const [name, pipeline] of facets) out[name] = [...pipeline(all, vars)];
    yield out;
  };
};
