import { ErrorCodes } from '../../../base/error_codes.js';
import { bsonTypeName } from '../../../bson/compare.js';
import { isPlainObject, type Doc } from '../../../bson/values.js';
import { unorderedEqual } from './schema_values.js';
import { keywordError, withAnnotations, type Rule, type Schema, type SchemaCompiler } from './rule.js';

// allOf, anyOf, oneOf and not combine schemas applied to the same value; enum lists the values allowed.

function parseSchemaList(keyword: string, spec: unknown, compiler: SchemaCompiler): Schema[] {
  if (!Array.isArray(spec)) keywordError(keyword, 'must be an array');
  if (spec.length === 0) keywordError(keyword, 'must be a non-empty array', ErrorCodes.BadValue);
  return spec.map((sub) => {
    if (!isPlainObject(sub)) keywordError(keyword, `must be an array of objects, but found an element of type ${bsonTypeName(sub)}`);
    return compiler.sibling(sub);
  });
}

function notSatisfied(schemas: Schema[], value: unknown): Doc[] {
  return schemas.flatMap((s, index) => (s.matches(value) ? [] : [withAnnotations({ index }, s, { details: s.explain(value) })]));
}

export function allOfRule(spec: unknown, compiler: SchemaCompiler): Rule {
  const schemas = parseSchemaList('allOf', spec, compiler);
  return {
    matches: (value) => schemas.every((s) => s.matches(value)),
    explain: (value) => [{ operatorName: 'allOf', schemasNotSatisfied: notSatisfied(schemas, value) }],
  };
}

export function anyOfRule(spec: unknown, compiler: SchemaCompiler): Rule {
  const schemas = parseSchemaList('anyOf', spec, compiler);
  return {
    matches: (value) => schemas.some((s) => s.matches(value)),
    explain: (value) => [{ operatorName: 'anyOf', schemasNotSatisfied: notSatisfied(schemas, value) }],
  };
}

// oneOf fails in two ways, reported differently: no schema matched, or more than one did.
export function oneOfRule(spec: unknown, compiler: SchemaCompiler): Rule {
  const schemas = parseSchemaList('oneOf', spec, compiler);
  const matching = (value: unknown): number[] => schemas.flatMap((s, i) => (s.matches(value) ? [i] : []));
  return {
    matches: (value) => matching(value).length === 1,
    explain: (value) => {
      const indexes = matching(value);
      if (indexes.length === 0) return [{ operatorName: 'oneOf', schemasNotSatisfied: notSatisfied(schemas, value) }];
      return [{ operatorName: 'oneOf', reason: 'more than one subschema matched', matchingSchemaIndexes: indexes }];
    },
  };
}

export function notRule(spec: unknown, compiler: SchemaCompiler): Rule {
  if (!isPlainObject(spec)) keywordError('not', `must be an object, but found an element of type ${bsonTypeName(spec)}`);
  const schema = compiler.sibling(spec);
  return {
    matches: (value) => !schema.matches(value),
    explain: () => [{ operatorName: 'not', reason: 'child expression matched' }],
  };
}

// At the top level only documents can be listed: an enum of no document matches nothing.
export function enumRule(spec: unknown, root: boolean): Rule {
  if (!Array.isArray(spec)) keywordError('enum', `must be an array, but found an element of type ${bsonTypeName(spec)}`);
  if (spec.length === 0) keywordError('enum', 'cannot be an empty array', ErrorCodes.FailedToParse);
  spec.forEach((v, i) => {
    if (spec.slice(0, i).some((w) => unorderedEqual(v, w))) keywordError('enum', 'array cannot contain duplicate values.', ErrorCodes.FailedToParse);
  });
  if (root && !spec.some(isPlainObject)) {
    return { matches: () => false, explain: () => [{ operatorName: 'enum', specifiedAs: { enum: spec }, reason: 'expression always evaluates to false' }] };
  }
  return {
    matches: (value) => value !== undefined && spec.some((allowed) => unorderedEqual(value, allowed)),
    explain: (value) => (value === undefined ? [] : [{ operatorName: 'enum', specifiedAs: { enum: spec }, reason: 'value was not found in enum', consideredValue: value }]),
  };
}
