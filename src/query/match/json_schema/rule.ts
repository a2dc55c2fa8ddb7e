import { MongoError } from '../../../base/errors.js';
import { ErrorCodes } from '../../../base/error_codes.js';
import { isNumber, isPlainObject, type Doc } from '../../../bson/values.js';

// One keyword of a schema, compiled. `value` is what the schema applies to: a field's value, an
// array element, or at the top level the document; undefined when the field is missing.
export interface Rule {
  matches(value: unknown): boolean;
  // For a value `matches` refused: the entries MongoDB 7.0 puts in errInfo.details for this
  // keyword (none when another keyword explains the failure, as a missing required field).
  explain(value: unknown): Doc[];
}

// A compiled (sub)schema: all of its rules hold. `annotations` are its title and description,
// which the error details repeat beside the entries of a failing subschema.
export interface Schema extends Rule {
  annotations: Doc;
}

// What the keywords of one schema need from the parser: nested schemas compiled the same way,
// for what the value holds (properties, items) or for the value itself (allOf, not, dependencies),
// which at the top level is the document.
export interface SchemaCompiler {
  subschema(spec: Doc): Schema;
  sibling(spec: Doc): Schema;
}

// The types a restriction keyword constrains (maximum: numbers, maxLength: strings ...): values of
// other types, and missing fields, satisfy it, as in JSON Schema.
export type RestrictedKind = 'number' | 'string' | 'array' | 'object';

export function isKind(kind: RestrictedKind, value: unknown): boolean {
  switch (kind) {
    case 'number': return isNumber(value);
    case 'string': return typeof value === 'string';
    case 'array': return Array.isArray(value);
    case 'object': return isPlainObject(value);
  }
}

export function restriction(kind: RestrictedKind, holds: (value: never) => boolean, explain: (value: never) => Doc[]): Rule {
  return {
    matches: (value) => !isKind(kind, value) || holds(value as never),
    explain: (value) => (isKind(kind, value) && !holds(value as never) ? explain(value as never) : []),
  };
}

export function schemaError(code: number, message: string): never {
  throw new MongoError(code, message);
}

export function keywordError(keyword: string, rest: string, code: number = ErrorCodes.TypeMismatch): never {
  throw new MongoError(code, `$jsonSchema keyword '${keyword}' ${rest}`);
}

export function withAnnotations(head: Doc, schema: Schema, tail: Doc): Doc {
  return { ...head, ...schema.annotations, ...tail };
}
