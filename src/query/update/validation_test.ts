import { describe, it } from 'node:test';
import { ErrorCodes as E } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { compileUpdate } from './update_driver.js';
import { assertMongoError, run } from './update_test_support.js';

interface ParseCase { name: string; update: Doc | Doc[]; arrayFilters?: Doc[]; code: number; message: string }

const parseCases: ParseCase[] = [
  { name: 'an unknown operator', update: { $foo: { a: 1 } }, code: E.FailedToParse, message: 'Unknown modifier: $foo. Expected a valid update modifier or pipeline-style update specified as an array' },
  { name: 'a plain field among operators', update: { $set: { a: 1 }, b: 1 }, code: E.FailedToParse, message: 'Unknown modifier: b. Expected a valid update modifier or pipeline-style update specified as an array' },
  { name: 'an operator whose argument is not a document', update: { $set: 1 }, code: E.FailedToParse, message: 'Modifiers operate on fields but we found type int instead. For example: {$mod: {<field>: ...}} not {$set: 1}' },
  { name: 'two operators on one path', update: { $set: { a: 1 }, $inc: { a: 1 } }, code: E.ConflictingUpdateOperators, message: "Updating the path 'a' would create a conflict at 'a'" },
  { name: 'a path under another updated path', update: { $set: { a: 1, 'a.b': 1 } }, code: E.ConflictingUpdateOperators, message: "Updating the path 'a.b' would create a conflict at 'a'" },
  { name: 'a $rename source that is also set', update: { $rename: { a: 'b' }, $set: { a: 1 } }, code: E.ConflictingUpdateOperators, message: "Updating the path 'a' would create a conflict at 'a'" },
  { name: 'an empty path', update: { $set: { '': 1 } }, code: E.EmptyFieldName, message: 'An empty update path is not valid.' },
  { name: 'a path with an empty part', update: { $set: { 'a..b': 1 } }, code: E.EmptyFieldName, message: "The update path 'a..b' contains an empty field name, which is not allowed." },
  { name: 'two positional elements', update: { $set: { 'a.$.b.$': 1 } }, code: E.BadValue, message: "Too many positional (i.e. '$') elements found in path 'a.$.b.$'" },
  { name: 'a leading positional element', update: { $set: { '$.a': 1 } }, code: E.BadValue, message: "Cannot have positional (i.e. '$') element in the first position in path '$.a'" },
  { name: '$inc of a string', update: { $inc: { a: 'x' } }, code: E.TypeMismatch, message: 'Cannot increment with non-numeric argument: {a: "x"}' },
  { name: '$mul of a string', update: { $mul: { a: 'x' } }, code: E.TypeMismatch, message: 'Cannot multiply with non-numeric argument: {a: "x"}' },
  { name: '$pop of 2', update: { $pop: { a: 2 } }, code: E.FailedToParse, message: '$pop expects 1 or -1, found: 2' },
  { name: '$pullAll of a scalar', update: { $pullAll: { a: 1 } }, code: E.BadValue, message: '$pullAll requires an array argument but was given a int' },
  { name: '$push with an unknown clause', update: { $push: { a: { $each: [1], $foo: 1 } } }, code: E.BadValue, message: 'Unrecognized clause in $push: $foo' },
  { name: '$push with a non-array $each', update: { $push: { a: { $each: 1 } } }, code: E.BadValue, message: 'The argument to $each in $push must be an array but it was of type: int' },
  { name: '$push with a bad $sort', update: { $push: { a: { $each: [], $sort: 2 } } }, code: E.BadValue, message: 'The $sort element value must be either 1 or -1' },
  { name: '$addToSet with a non-array $each', update: { $addToSet: { a: { $each: 1 } } }, code: E.TypeMismatch, message: 'The argument to $each in $addToSet must be an array but it was of type int' },
  { name: '$bit with an unknown operation', update: { $bit: { a: { nand: 1 } } }, code: E.BadValue, message: "The $bit modifier only supports 'and', 'or', and 'xor', not 'nand' which is an unknown operator: {nand: 1}" },
  { name: '$currentDate with a bad type', update: { $currentDate: { a: { $type: 'x' } } }, code: E.BadValue, message: "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}" },
  { name: '$rename to a non-string', update: { $rename: { a: 1 } }, code: E.BadValue, message: "The 'to' field for $rename must be a string: a: 1" },
  { name: '$rename onto a prefix', update: { $rename: { a: 'a.b' } }, code: E.BadValue, message: 'The source and target field for $rename must not be on the same path: a: "a.b"' },
  { name: '$rename of a positional path', update: { $rename: { 'a.$': 'b' } }, code: E.BadValue, message: 'The source field for $rename may not be dynamic: a.$' },
  { name: 'an identifier without a filter', update: { $set: { 'a.$[i]': 1 } }, code: E.BadValue, message: "No array filter found for identifier 'i' in path 'a.$[i]'" },
  { name: 'an unused array filter', update: { $set: { 'a.$[i]': 5 } }, arrayFilters: [{ i: 0 }, { j: 0 }], code: E.FailedToParse, message: "The array filter for identifier 'j' was not used in the update { $set: { a.$[i]: 5 } }" },
  { name: 'two filters for one identifier', update: { $set: { 'a.$[i]': 5 } }, arrayFilters: [{ i: 0 }, { i: 1 }], code: E.FailedToParse, message: 'Found multiple array filters with the same top-level field name i' },
  { name: 'a filter naming two identifiers', update: { $set: { 'a.$[i]': 5 } }, arrayFilters: [{ i: 0, j: 0 }], code: E.FailedToParse, message: "Error parsing array filter :: caused by :: Expected a single top-level field name, found 'i' and 'j'" },
  { name: 'a filter with an uppercase identifier', update: { $set: { 'a.$[I]': 5 } }, arrayFilters: [{ I: 0 }], code: E.BadValue, message: "Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found 'I'" },
  { name: 'an empty array filter', update: { $set: { 'a.$[i]': 5 } }, arrayFilters: [{}], code: E.FailedToParse, message: 'Cannot use an expression without a top-level field name in arrayFilters' },
  { name: 'array filters with a pipeline', update: [{ $set: { a: 1 } }], arrayFilters: [{ i: 0 }], code: E.FailedToParse, message: 'arrayFilters may not be specified for pipeline-style updates' },
  { name: 'a disallowed pipeline stage', update: [{ $match: { a: 1 } }], code: E.InvalidOptions, message: '$match is not allowed to be used within an update' },
];

interface ApplyCase { name: string; doc: Doc; update: Doc; code: number; message: string }

const applyCases: ApplyCase[] = [
  { name: 'changing _id with $set', doc: { _id: 1 }, update: { $set: { _id: 2 } }, code: E.ImmutableField, message: "Performing an update on the path '_id' would modify the immutable field '_id'" },
  { name: 'removing _id with $unset', doc: { _id: 1 }, update: { $unset: { _id: 1 } }, code: E.ImmutableField, message: "Performing an update on the path '_id' would modify the immutable field '_id'" },
  { name: 'changing _id by replacement', doc: { _id: 1 }, update: { _id: 2, a: 1 }, code: E.ImmutableField, message: "After applying the update, the (immutable) field '_id' was found to have been altered to _id: 2" },
  { name: 'a replacement with an operator', doc: { _id: 1 }, update: { a: 1, $set: { b: 1 } }, code: E.DollarPrefixedFieldName, message: "The dollar ($) prefixed field '$set' in '$set' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith." },
  { name: 'creating a top-level dollar field', doc: { _id: 1 }, update: { $set: { $a: 1 } }, code: E.DollarPrefixedFieldName, message: "The dollar ($) prefixed field '$a' in '$a' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith." },
  { name: '$inc of a string field', doc: { _id: 1, a: 'x' }, update: { $inc: { a: 1 } }, code: E.TypeMismatch, message: "Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 'a' of non-numeric type string" },
  { name: '$push onto a non-array', doc: { _id: 1, a: 1 }, update: { $push: { a: 1 } }, code: E.BadValue, message: "The field 'a' must be an array but is of type int in document {_id: 1}" },
  { name: '$addToSet onto a non-array', doc: { _id: 1, a: 1 }, update: { $addToSet: { a: 1 } }, code: E.BadValue, message: "Cannot apply $addToSet to non-array field. Field named 'a' has non-array type int" },
  { name: '$pop of a non-array', doc: { _id: 1, a: 1 }, update: { $pop: { a: 1 } }, code: E.TypeMismatch, message: "Path 'a' contains an element of non-array type 'int'" },
  { name: '$pull from a non-array', doc: { _id: 1, a: 1 }, update: { $pull: { a: 1 } }, code: E.BadValue, message: 'Cannot apply $pull to a non-array value' },
  { name: '$bit of a double', doc: { _id: 1, a: 1.5 }, update: { $bit: { a: { and: 1 } } }, code: E.BadValue, message: 'Cannot apply $bit to a value of non-integral type._id: 1 has the field a of non-integer type double' },
];

describe('update validation', () => {
  for (const c of parseCases) {
    it(`rejects ${c.name}`, () => {
      assertMongoError(() => compileUpdate(c.update, { arrayFilters: c.arrayFilters }), c.code, c.message);
    });
  }
  for (const c of applyCases) {
    it(`rejects ${c.name} when applied`, () => {
      assertMongoError(() => run(c.doc, c.update), c.code, c.message);
    });
  }
});
