import { bsonTypeName } from '../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';

// MongoDB's rules for a TTL index (index_key_validate.cpp, validateIndexSpecTTL and
// validateExpireAfterSeconds for a secondary index): createIndexes refuses a spec that breaks
// them, collMod a value outside the range, and the TTL monitor skips an index that breaks them
// anyway (one written before they were checked), counting it in invalidTTLIndexSkips.

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

// The whole seconds MongoDB reads from a numeric expireAfterSeconds (safeNumberLong: truncated;
// a long has no -0, which would show as a double).
export function wholeSeconds(value: unknown): number {
  const seconds = Math.trunc(toDouble(value));
  return seconds === 0 ? 0 : seconds;
}

// The range a TTL index's expireAfterSeconds must lie in, once read as whole seconds.
export function expireAfterSecondsRangeProblem(seconds: number): string | undefined {
  if (seconds < 0) return "TTL index 'expireAfterSeconds' option cannot be less than 0";
  if (seconds > INT32_MAX) return "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number";
  return undefined;
}

// Why `value` cannot be a TTL index's expireAfterSeconds, or undefined when it can.
export function expireAfterSecondsProblem(value: unknown): string | undefined {
  if (!isNumber(value)) return `TTL index 'expireAfterSeconds' option must be numeric, but received a type of '${bsonTypeName(value)}'`;
  if (Number.isNaN(toDouble(value))) return "TTL index 'expireAfterSeconds' option must not be NaN";
  const seconds = wholeSeconds(value);
  if (!(seconds >= INT32_MIN && seconds <= INT32_MAX)) return "TTL index 'expireAfterSeconds' must be within the range of a 32-bit integer";
  return expireAfterSecondsRangeProblem(seconds);
}

function isTtlSpec(spec: Doc): boolean {
  return spec.expireAfterSeconds !== undefined;
}

// Why an index spec with expireAfterSeconds cannot be a TTL index, or undefined when it can (or
// is no TTL index at all).
export function ttlSpecProblem(spec: Doc): string | undefined {
  if (!isTtlSpec(spec)) return undefined;
  const problem = expireAfterSecondsProblem(spec.expireAfterSeconds);
  if (problem !== undefined) return problem;
  const key = isPlainObject(spec.key) ? spec.key : {};
  if (Object.keys(key).length !== 1) return 'TTL indexes are single-field indexes, compound indexes do not support TTL';
  return undefined;
}
