import { ErrorCodes } from '../../../base/error_codes.js';
import { isNumber, toDouble, type Doc } from '../../../bson/values.js';
import { describeValue } from '../describe_value.js';
import { comparison } from '../leaf_predicates.js';
import { compileRegex } from '../regex.js';
import { isMultipleOf } from './schema_values.js';
import { keywordError, restriction, schemaError, type Rule } from './rule.js';

// The keywords on strings and numbers: pattern, maxLength, minLength, multipleOf, maximum and
// minimum (with exclusiveMaximum, exclusiveMinimum). Each constrains only values of its type.

// A count keyword's argument (maxLength, minItems, maxProperties ...): a whole, non-negative number.
export function countArgument(keyword: string, value: unknown): number {
  const shown = `${keyword}: ${describeValue(value)}`;
  if (!isNumber(value)) schemaError(ErrorCodes.FailedToParse, `Expected a number in: ${shown}`);
  const n = toDouble(value);
  if (!Number.isFinite(n) || Math.abs(n) >= 2 ** 63) schemaError(ErrorCodes.FailedToParse, `Cannot represent as a 64-bit integer: ${shown}`);
  if (!Number.isInteger(n)) schemaError(ErrorCodes.FailedToParse, `Expected an integer: ${shown}`);
  if (n < 0) schemaError(ErrorCodes.FailedToParse, `Expected a positive number in: ${shown}`);
  return n;
}

function failure(operatorName: string, specifiedAs: Doc, reason: string, value: unknown): Doc[] {
  return [{ operatorName, specifiedAs, reason, consideredValue: value }];
}

export function patternRule(spec: unknown): Rule {
  if (typeof spec !== 'string') keywordError('pattern', 'must be a string');
  // JSON Schema patterns take no flags.
  const re = compileRegex(spec, '');
  return restriction('string', (s: string) => re.test(s), (s: string) => failure('pattern', { pattern: spec }, 'regular expression did not match', s));
}

// MongoDB counts a string's length in code points.
export function lengthRule(keyword: 'maxLength' | 'minLength', spec: unknown): Rule {
  const limit = countArgument(keyword, spec);
  const holds = (s: string): boolean => {
    const length = [...s].length;
    return keyword === 'maxLength' ? length <= limit : length >= limit;
  };
  return restriction('string', holds, (s: string) => failure(keyword, { [keyword]: spec }, 'specified string length was not satisfied', s));
}

export function multipleOfRule(spec: unknown): Rule {
  if (!isNumber(spec)) keywordError('multipleOf', 'must be a number');
  if (toDouble(spec) <= 0) keywordError('multipleOf', 'must have a positive value', ErrorCodes.FailedToParse);
  return restriction('number', (v: unknown) => isMultipleOf(v, spec), (v: unknown) =>
    failure('multipleOf', { multipleOf: spec }, 'considered value is not a multiple of the specified value', v));
}

// maximum or minimum, `exclusive` when exclusiveMaximum/exclusiveMinimum is true; the bound
// compares as the query language's $lt/$lte/$gt/$gte do.
export function boundRule(keyword: 'maximum' | 'minimum', spec: unknown, exclusiveSpec: unknown): Rule {
  const exclusiveKeyword = keyword === 'maximum' ? 'exclusiveMaximum' : 'exclusiveMinimum';
  let exclusive = false;
  if (exclusiveSpec !== undefined) {
    if (typeof exclusiveSpec !== 'boolean') keywordError(exclusiveKeyword, 'must be a boolean');
    exclusive = exclusiveSpec;
  }
  if (!isNumber(spec)) keywordError(keyword, 'must be a number');
  const op = keyword === 'maximum' ? (exclusive ? '$lt' : '$lte') : (exclusive ? '$gt' : '$gte');
  const holds = comparison(op, spec);
  const specifiedAs: Doc = exclusive ? { [keyword]: spec, [exclusiveKeyword]: true } : { [keyword]: spec };
  return restriction('number', holds, (v: unknown) => failure(keyword, specifiedAs, 'comparison failed', v));
}

// exclusiveMaximum without maximum (or exclusiveMinimum without minimum).
export function refuseLoneExclusive(keyword: 'maximum' | 'minimum'): never {
  const exclusiveKeyword = keyword === 'maximum' ? 'exclusiveMaximum' : 'exclusiveMinimum';
  return keywordError(keyword, `must be a present if ${exclusiveKeyword} is present`, ErrorCodes.FailedToParse);
}
