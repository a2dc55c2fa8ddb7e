import { ErrorCodes } from '../../../base/error_codes.js';
import { bsonTypeName } from '../../../bson/compare.js';
import { isPlainObject, type Doc } from '../../../bson/values.js';
import { someOnPath } from '../element_path.js';
import { compileRegex } from '../regex.js';
import { countArgument } from './scalar_rules.js';
import { keywordError, restriction, schemaError, withAnnotations, type Rule, type Schema, type SchemaCompiler } from './rule.js';

// The keywords on embedded documents (and at the top level on the document itself): properties,
// patternProperties and additionalProperties, required, minProperties, maxProperties, dependencies.

// A property name with dots is a path, as in MongoDB, where `required: ['a.b']` asks for the
// field b of the embedded document a (and finds it in any element of an array a).
function has(obj: Doc, name: string): boolean {
  if (!name.includes('.')) return Object.hasOwn(obj, name) && obj[name] !== undefined;
  return someOnPath(obj, name.split('.'), 'traverse', (value) => value !== undefined);
}

// The value a property's schema applies to: through embedded documents for a dotted name.
function propertyValue(obj: Doc, name: string): unknown {
  if (!name.includes('.')) return obj[name];
  let value: unknown = obj;
  for (const part of name.split('.')) value = isPlainObject(value) && Object.hasOwn(value, part) ? value[part] : undefined;
  return value;
}

export function parseRequired(spec: unknown): string[] {
  if (!Array.isArray(spec)) keywordError('required', `must be an array, but found an element of type ${bsonTypeName(spec)}`);
  for (const name of spec) {
    if (typeof name !== 'string') keywordError('required', `must be an array of strings, but found an element of type: ${bsonTypeName(name)}`);
  }
  if (spec.length === 0) keywordError('required', 'cannot be an empty array', ErrorCodes.FailedToParse);
  if (new Set(spec).size !== spec.length) keywordError('required', 'array cannot contain duplicate values', ErrorCodes.FailedToParse);
  return spec as string[];
}

// MongoDB holds the required names as a sorted set: missing ones are listed in that order.
export function requiredRule(spec: unknown[], names: string[]): Rule {
  const sorted = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const missing = (o: Doc): string[] => sorted.filter((name) => !has(o, name));
  return restriction('object', (o: Doc) => missing(o).length === 0, (o: Doc) => [{
    operatorName: 'required', specifiedAs: { required: spec }, missingProperties: missing(o),
  }]);
}

// A property's schema applies when the property is there; `required` answers for its absence.
export function propertiesRule(spec: unknown, compiler: SchemaCompiler): Rule {
  if (!isPlainObject(spec)) keywordError('properties', 'must be an object');
  const properties = Object.entries(spec).map(([name, sub]) => {
    if (!isPlainObject(sub)) schemaError(ErrorCodes.TypeMismatch, `Nested schema for $jsonSchema property '${name}' must be an object`);
    return { name, schema: compiler.subschema(sub) };
  });
  const failing = (o: Doc): { name: string; schema: Schema }[] =>
    properties.filter(({ name, schema }) => propertyValue(o, name) !== undefined && !schema.matches(propertyValue(o, name)));
  return restriction('object', (o: Doc) => failing(o).length === 0, (o: Doc) => {
    const notSatisfied = failing(o).flatMap(({ name, schema }) => {
      const details = schema.explain(propertyValue(o, name));
      return details.length === 0 ? [] : [withAnnotations({ propertyName: name }, schema, { details })];
    });
    return notSatisfied.length === 0 ? [] : [{ operatorName: 'properties', propertiesNotSatisfied: notSatisfied }];
  });
}

interface PatternSchema {
  source: string;
  re: RegExp;
  schema: Schema;
}

// patternProperties and additionalProperties: a property matching one or more patterns satisfies
// each of their schemas; one named neither by properties nor by a pattern is "additional".
export function allowedPropertiesRule(properties: unknown, patterns: unknown, additional: unknown, compiler: SchemaCompiler): Rule | undefined {
  if (patterns === undefined && additional === undefined) return undefined;
  const named = new Set(isPlainObject(properties) ? Object.keys(properties) : []);
  const patternSchemas: PatternSchema[] = [];
  if (patterns !== undefined) {
    if (!isPlainObject(patterns)) keywordError('patternProperties', 'must be an object');
    for (const [source, sub] of Object.entries(patterns)) {
      if (!isPlainObject(sub)) keywordError('patternProperties', `has property '${source}' which is not an object`);
      patternSchemas.push({ source, re: compileRegex(source, ''), schema: compiler.subschema(sub) });
    }
  }
  if (additional !== undefined && typeof additional !== 'boolean' && !isPlainObject(additional)) {
    keywordError('additionalProperties', 'must be an object or a boolean');
  }
  const otherwise: Schema | boolean = isPlainObject(additional) ? compiler.subschema(additional) : additional !== false;
  const additionalNames = (o: Doc): string[] => Object.keys(o).filter((k) => !named.has(k) && !patternSchemas.some((p) => p.re.test(k)));
  const additionalFails = (o: Doc, name: string): boolean => (typeof otherwise === 'boolean' ? !otherwise : !otherwise.matches(o[name]));
  const patternFailure = (o: Doc, p: PatternSchema): string | undefined => Object.keys(o).find((k) => p.re.test(k) && !p.schema.matches(o[k]));
  const holds = (o: Doc): boolean =>
    !additionalNames(o).some((k) => additionalFails(o, k)) && patternSchemas.every((p) => patternFailure(o, p) === undefined);
  return restriction('object', holds, (o: Doc) => {
    const out: Doc[] = [];
    const extra = additionalNames(o);
    if (otherwise === false && extra.length > 0) {
      out.push({ operatorName: 'additionalProperties', specifiedAs: { additionalProperties: false }, additionalProperties: extra });
    } else if (typeof otherwise !== 'boolean') {
      const failing = extra.find((k) => additionalFails(o, k));
      if (failing !== undefined) {
        out.push(withAnnotations({ operatorName: 'additionalProperties' }, otherwise, {
          reason: 'at least one additional property did not match the subschema', failingProperty: failing, details: otherwise.explain(o[failing]),
        }));
      }
    }
    const patternDetails = patternSchemas.flatMap((p) => {
      const name = patternFailure(o, p);
      return name === undefined ? [] : [withAnnotations({ propertyName: name }, p.schema, { regexMatched: p.source, details: p.schema.explain(o[name]) })];
    });
    if (patternDetails.length > 0) out.push({ operatorName: 'patternProperties', details: patternDetails });
    return out;
  });
}

export function propertyCountRule(keyword: 'minProperties' | 'maxProperties', spec: unknown): Rule {
  const limit = countArgument(keyword, spec);
  const holds = (o: Doc): boolean => {
    const n = Object.keys(o).length;
    return keyword === 'maxProperties' ? n <= limit : n >= limit;
  };
  return restriction('object', holds, (o: Doc) => [{
    operatorName: keyword, specifiedAs: { [keyword]: spec }, reason: 'specified number of properties was not satisfied', numberOfProperties: Object.keys(o).length,
  }]);
}

type Dependency = { property: string; needs: string[] } | { property: string; schema: Schema };

function parseDependency(property: string, spec: unknown, compiler: SchemaCompiler): Dependency {
  const where = `in $jsonSchema keyword 'dependencies'`;
  if (isPlainObject(spec)) return { property, schema: compiler.sibling(spec) };
  if (!Array.isArray(spec)) schemaError(ErrorCodes.TypeMismatch, `property '${property}' ${where} must be either an object or an array`);
  if (spec.length === 0) schemaError(ErrorCodes.FailedToParse, `property '${property}' ${where} cannot be an empty array`);
  const needs: string[] = [];
  for (const name of spec) {
    if (typeof name !== 'string') schemaError(ErrorCodes.TypeMismatch, `array '${property}' ${where} can only contain strings, but found element of type: ${bsonTypeName(name)}`);
    if (needs.includes(name)) schemaError(ErrorCodes.FailedToParse, `array '${property}' ${where} contains duplicate element: ${name}`);
    needs.push(name);
  }
  return { property, needs };
}

// A dependency applies when its property is there: then the listed properties must be, or the
// document must satisfy the schema as well.
export function dependenciesRule(spec: unknown, compiler: SchemaCompiler): Rule {
  if (!isPlainObject(spec)) keywordError('dependencies', 'must be an object');
  const dependencies = Object.entries(spec).map(([property, dep]) => parseDependency(property, dep, compiler));
  const fails = (o: Doc, d: Dependency): boolean => has(o, d.property) && ('needs' in d ? d.needs.some((n) => !has(o, n)) : !d.schema.matches(o));
  return restriction('object', (o: Doc) => !dependencies.some((d) => fails(o, d)), (o: Doc) => [{
    operatorName: 'dependencies',
    failingDependencies: dependencies.filter((d) => fails(o, d)).map((d) => ('needs' in d
      ? { conditionalProperty: d.property, missingProperties: d.needs.filter((n) => !has(o, n)) }
      : { conditionalProperty: d.property, details: d.schema.explain(o) })),
  }]);
}
