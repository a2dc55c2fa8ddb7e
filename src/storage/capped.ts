import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';

// A capped collection's bounds, from its options: at most `size` bytes of documents and, when
// `max` is set, at most `max` documents; inserting beyond either removes the oldest documents
// (insertion order) in the same write unit, as MongoDB does.
export interface CappedLimits {
  size: number;
  max: number | undefined;
}

const MIN_SIZE = 4096;
const MAX_SIZE = 1024 ** 5;

// The bounds a collection's stored options give, or undefined when it is not capped.
export function cappedLimits(options: Doc): CappedLimits | undefined {
  if (options.capped !== true) return undefined;
  const max = typeof options.max === 'number' && options.max > 0 ? options.max : undefined;
  return { size: effectiveCappedSize(Number(options.size)), max };
}

// MongoDB raises a size of at most 4096 bytes to 4096 and any other to a multiple of 256.
export function effectiveCappedSize(size: number): number {
  return size <= MIN_SIZE ? MIN_SIZE : Math.ceil(size / 256) * 256;
}

// The checks `create` makes of capped options before anything is written.
export function checkCappedOptions(options: Doc): void {
  if (options.capped === undefined || options.capped === false) return;
  if (options.capped !== true) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'create.capped' is the wrong type, expected type 'bool'");
  if (options.size === undefined) throw new MongoError(ErrorCodes.InvalidOptions, "the 'size' field is required when 'capped' is true");
  if (typeof options.size !== 'number') throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'create.size' is the wrong type, expected number");
  if (options.size < 0 || options.size > MAX_SIZE) throw new MongoError(ErrorCodes.BadValue, `size must be between 0 and ${MAX_SIZE}`);
  if (options.max !== undefined && typeof options.max !== 'number') throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'create.max' is the wrong type, expected number");
}
