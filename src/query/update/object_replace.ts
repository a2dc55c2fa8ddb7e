import { mongoError } from '../../base/errors.js';
import { valuesEqual } from '../../bson/compare.js';
import { cloneValue, type Doc } from '../../bson/values.js';
import { elementToString } from './bson_string.js';
import { validateForStorage } from './storage_validation.js';

// A whole-document replacement (MongoDB's ObjectReplaceExecutor): the old _id stays, first,
// unless the replacement brings its own, which must then equal it.
export function replaceDocument(original: Doc, replacement: Doc, allowTopLevelDollar: boolean): Doc {
  const result: Doc = {};
  if (replacement._id === undefined && original._id !== undefined) result._id = original._id;
  for (const [key, value] of Object.entries(replacement)) {
    if (value !== undefined) result[key] = cloneValue(value);
  }
  validateForStorage(result, allowTopLevelDollar);
  if (original._id !== undefined) {
    if (result._id === undefined) {
      throw mongoError('ImmutableField', "After applying the update, the '_id' (required and immutable) field was found to have been removed --");
    }
    if (!valuesEqual(result._id, original._id)) {
      throw mongoError('ImmutableField', `After applying the update, the (immutable) field '_id' was found to have been altered to ${elementToString('_id', result._id)}`);
    }
  }
  return result;
}
