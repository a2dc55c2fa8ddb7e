import { MongoError } from '../../../base/errors.js';
import { ErrorCodes } from '../../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../../bson/values.js';
import { compileSchema, type SchemaOptions } from './schema_parser.js';

// $jsonSchema, as MongoDB 7.0 has it: draft 4 of JSON Schema without $ref, definitions or format,
// plus bsonType and encrypt, over BSON values. Compiled here rather than by a JSON Schema library:
// MongoDB's semantics differ from draft 4's (BSON types and numeric comparison across int, long,
// double and decimal; unordered field comparison in enum and uniqueItems; no implicit array
// traversal; its own parse errors), and a failed validation explains itself in MongoDB's shape
// (errInfo.details), which no library produces.
export interface JsonSchema {
  matches(doc: Doc): boolean;
  // Why `doc` fails, as errInfo.details of a DocumentValidationFailure.
  explain(doc: Doc): Doc;
}

export function compileJsonSchema(spec: unknown, options: SchemaOptions): JsonSchema {
  if (!isPlainObject(spec)) throw new MongoError(ErrorCodes.TypeMismatch, '$jsonSchema must be an object');
  const schema = compileSchema(spec, options, true);
  // Only documents are stored: a top-level type that excludes objects matches nothing.
  if (schema.types !== undefined && !schema.types.has('object')) {
    return {
      matches: () => false,
      explain: () => ({ operatorName: '$jsonSchema', specifiedAs: { $jsonSchema: spec }, reason: 'expression always evaluates to false' }),
    };
  }
  return {
    matches: (doc) => schema.matches(doc),
    explain: (doc) => ({ operatorName: '$jsonSchema', ...schema.annotations, schemaRulesNotSatisfied: schema.explain(doc) }),
  };
}
