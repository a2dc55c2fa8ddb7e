import { bsonTypeName } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { compileSort } from '../sort.js';
import { fail } from './operator_support.js';
import type { Stage, StageParser } from './stage_support.js';

// Stages that choose, order or count documents without changing them.

function integralArgument(spec: unknown, stage: string, typeCode: number): number {
  if (!isNumber(spec)) fail(typeCode, `invalid argument to ${stage} stage: Expected a number in: ${stage}: ${String(spec)}`);
  const n = toDouble(spec);
  if (!Number.isInteger(n)) fail(typeCode, `invalid argument to ${stage} stage: Expected an integer: ${stage}: ${n}`);
  return n;
}

export const parseLimit: StageParser = (spec) => {
  const n = integralArgument(spec, '$limit', 15957);
  if (n <= 0) fail(15958, `invalid argument to $limit stage: Expected a positive number in: $limit: ${n}`);
  return function* (input) {
    let seen = 0;
    for (const doc of input) {
      yield doc;
      if (++seen >= n) return;
    }
  };
};

export const parseSkip: StageParser = (spec) => {
  const n = integralArgument(spec, '$skip', 15956);
  if (n < 0) fail(15956, `invalid argument to $skip stage: Expected a non-negative number in: $skip: ${n}`);
  return function* (input) {
    let skipped = 0;
    for (const doc of input) {
      if (skipped < n) skipped++;
      else yield doc;
    }
  };
};

export function validateSortSpec(spec: unknown): Doc {
  if (!isPlainObject(spec)) fail(15973, 'the $sort key specification must be an object');
  if (Object.keys(spec).length === 0) fail(15976, '$sort stage must have at least one sort key');
  for (const key of Object.keys(spec)) {
    const v = spec[key];
    if (isPlainObject(v)) {
      if (!('$meta' in v)) fail(17312, `$meta is the only expression supported by $sort right now`);
      continue;
    }
    if (!isNumber(v) || (toDouble(v) !== 1 && toDouble(v) !== -1)) {
      fail(15975, '$sort key ordering must be 1 (for ascending) or -1 (for descending)');
    }
  }
  return spec;
}

// Blocking: Array.prototype.sort is stable, so ties keep input order.
export const parseSort: StageParser = (spec): Stage => {
  const comparator = compileSort(validateSortSpec(spec));
  return function* (input) {
    yield* [...input].sort(comparator);
  };
};

export const parseCount: StageParser = (spec) => {
  if (typeof spec !== 'string') fail(40156, 'the count field must be a non-empty string');
  if (spec === '') fail(40157, 'the count field must be a non-empty string');
  if (spec.startsWith('$')) fail(40158, 'the count field cannot be a $-prefixed path');
  if (spec.includes('.')) fail(40160, "the count field cannot contain '.'");
  return function* (input) {
    let n = 0;
    for (const _doc of input) n++;
    if (n > 0) yield { [spec]: n };
  };
};

// Reservoir sampling keeps memory at `size` documents whatever the input.
export const parseSample: StageParser = (spec) => {
  if (!isPlainObject(spec)) fail(28745, 'the $sample stage specification must be an object');
  for (const key of Object.keys(spec)) {
    if (key !== 'size') fail(28748, `unrecognized option to $sample: ${key}`);
  }
  if (!('size' in spec)) fail(28749, '$sample stage must specify a size');
  const size = spec.size;
  if (!isNumber(size)) fail(28746, `size argument to $sample must be a number, got ${bsonTypeName(size)}`);
  const n = Math.trunc(toDouble(size));
  if (n < 0) fail(28747, 'size argument to $sample must not be negative');
  return function* (input) {
    const reservoir: Doc[] = [];
    let seen = 0;
    for (const doc of input) {
      seen++;
      if (reservoir.length < n) reservoir.push(doc);
      else {
        const j = Math.floor(Math.random() * seen);
        if (j < n) reservoir[j] = doc;
      }
    }
    for (let i = reservoir.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [reservoir[i], reservoir[j]] = [reservoir[j]!, reservoir[i]!];
    }
    yield* reservoir;
  };
};
