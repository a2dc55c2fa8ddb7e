import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName, canonicalType, compareValues } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { parseAccumulator, type Accumulator } from './accumulators.js';
import { fail } from './operator_support.js';
import { parseGroupFields, runGroups } from './stage_group.js';
import { compileDocExpression, type Stage, type StageEnv, type StageParser } from './stage_support.js';

// $bucket, $bucketAuto and $sortByCount: groupings with a computed key and an order.

function isPathOrExpression(v: unknown): boolean {
  return (typeof v === 'string' && v.startsWith('$')) || isPlainObject(v);
}

function outputFields(spec: Doc, env: StageEnv, stage: string): [string, Accumulator][] {
  if (!('output' in spec)) return [['count', parseAccumulator('$sum', 1, env)]];
  if (!isPlainObject(spec.output)) fail(40196, `The ${stage} 'output' field must be an object, but found type: ${bsonTypeName(spec.output)}.`);
  return parseGroupFields(spec.output, env, []);
}

export const parseBucket: StageParser = (spec, env): Stage => {
  if (!isPlainObject(spec)) fail(40201, `Argument to $bucket stage must be an object, but found type: ${bsonTypeName(spec)}.`);
  for (const key of Object.keys(spec)) {
    if (!['groupBy', 'boundaries', 'default', 'output'].includes(key)) fail(40197, `Unrecognized option to $bucket: ${key}.`);
  }
  if (!('groupBy' in spec) || !('boundaries' in spec)) fail(40198, "$bucket requires 'groupBy' and 'boundaries' to be specified.");
  if (!isPathOrExpression(spec.groupBy)) fail(40202, `The $bucket 'groupBy' field must be defined as a $-prefixed path or an expression, but found: ${JSON.stringify(spec.groupBy)}.`);
  const boundaries = spec.boundaries;
  if (!Array.isArray(boundaries)) fail(40200, `The $bucket 'boundaries' field must be an array, but found type: ${bsonTypeName(boundaries)}.`);
  if (boundaries.length < 2) fail(40192, `The $bucket 'boundaries' field must have at least 2 values, but found ${boundaries.length} value(s).`);
  for (let i = 1; i < boundaries.length; i++) {
    if (canonicalType(boundaries[i]) !== canonicalType(boundaries[0])) {
      fail(40193, `All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types ${bsonTypeName(boundaries[0])} and ${bsonTypeName(boundaries[i])}.`);
    }
    if (compareValues(boundaries[i - 1], boundaries[i]) >= 0) {
      fail(40194, `The 'boundaries' option to $bucket must be sorted, but elements ${i - 1} and ${i} are not in ascending order.`);
    }
  }
  const hasDefault = 'default' in spec;
  if (hasDefault && canonicalType(spec.default) === canonicalType(boundaries[0])
    && compareValues(spec.default, boundaries[0]) >= 0 && compareValues(spec.default, boundaries[boundaries.length - 1]) < 0) {
    fail(40199, "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.");
  }
  const groupBy = compileDocExpression(spec.groupBy, env);
  const fields = outputFields(spec, env, '$bucket');
  const bucketOf = (doc: Doc, vars: Record<string, unknown>): unknown => {
    const v = groupBy(doc, vars);
    if (canonicalType(v) === canonicalType(boundaries[0])) {
      for (let i = 0; i < boundaries.length - 1; i++) {
        if (compareValues(v, boundaries[i]) >= 0 && compareValues(v, boundaries[i + 1]) < 0) return boundaries[i];
      }
    }
    if (!hasDefault) fail(40066, '$switch could not find a matching branch for an input, and no default was specified.');
    return spec.default;
  };
  return function* (input, vars) {
    const groups = [...runGroups(input, vars, { id: bucketOf, fields })];
    yield* groups.sort((a, b) => compareValues(a._id, b._id));
  };
};

export const parseBucketAuto: StageParser = (spec, env): Stage => {
  if (!isPlainObject(spec)) fail(40240, `The argument to $bucketAuto must be an object, but found type: ${bsonTypeName(spec)}.`);
  for (const key of Object.keys(spec)) {
    if (!['groupBy', 'buckets', 'output', 'granularity'].includes(key)) fail(40245, `Unrecognized option to $bucketAuto: ${key}.`);
  }
  if (!('groupBy' in spec) || !('buckets' in spec)) fail(40246, "$bucketAuto requires 'groupBy' and 'buckets' to be specified");
  if (!isPathOrExpression(spec.groupBy)) fail(40239, `The $bucketAuto 'groupBy' field must be defined as a $-prefixed path or an expression object, but found: ${JSON.stringify(spec.groupBy)}.`);
  const b = spec.buckets;
  if (!isNumber(b) || !Number.isInteger(toDouble(b))) fail(40241, `The $bucketAuto 'buckets' field must be a numeric value, but found type: ${bsonTypeName(b)}.`);
  const buckets = toDouble(b);
  if (buckets <= 0) fail(40243, `The $bucketAuto 'buckets' field must be greater than 0, but found: ${buckets}.`);
  if ('granularity' in spec) fail(ErrorCodes.NotImplemented, '$bucketAuto granularity is not supported');
  const groupBy = compileDocExpression(spec.groupBy, env);
  const fields = outputFields(spec, env, '$bucketAuto');
  return function* (input, vars) {
    const entries = [...input].map((doc) => {
      const v = groupBy(doc, vars);
      return { doc, value: v === undefined ? null : v };
    });
    entries.sort((x, y) => compareValues(x.value, y.value));
    const size = Math.max(1, Math.round(entries.length / buckets));
    let i = 0;
    const made: { min: unknown; docs: Doc[]; last: unknown }[] = [];
    while (i < entries.length) {
      const min = entries[i]!.value;
      const docs: Doc[] = [];
      const isLast = made.length === buckets - 1;
      while (i < entries.length && (isLast || docs.length < size)) docs.push(entries[i++]!.doc);
      // Equal values never straddle two buckets.
      while (i < entries.length && compareValues(entries[i]!.value, entries[i - 1]!.value) === 0) docs.push(entries[i++]!.doc);
      made.push({ min, docs, last: entries[i - 1]!.value });
    }
    for (let k = 0; k < made.length; k++) {
      const bucket = made[k]!;
      const max = k + 1 < made.length ? made[k + 1]!.min : bucket.last;
      const out: Doc = { _id: { min: bucket.min, max } };
      const states = fields.map(([, acc]) => acc.create());
      for (const doc of bucket.docs) for (const s of states) s.add(doc, vars);
      fields.forEach(([name], j) => {
        out[name] = states[j]!.result();
      });
      yield out;
    }
  };
};

export const parseSortByCount: StageParser = (spec, env): Stage => {
  if (!isPathOrExpression(spec) || (isPlainObject(spec) && !Object.keys(spec)[0]?.startsWith('$'))) {
    fail(40148, 'the sortByCount field must be defined as a $-prefixed path or an expression');
  }
  const id = compileDocExpression(spec, env);
  const fields: [string, Accumulator][] = [['count', parseAccumulator('$sum', 1, env)]];
  return function* (input, vars) {
    const groups = [...runGroups(input, vars, { id, fields })];
    yield* groups.sort((a, b) => compareValues(b.count, a.count));
  };
};
