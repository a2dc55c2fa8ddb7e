import { ErrorCodes } from '../../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../../bson/values.js';
import { itemCountRule, itemsRules, uniqueItemsRule } from './array_rules.js';
import { allOfRule, anyOfRule, enumRule, notRule, oneOfRule } from './logical_rules.js';
import { allowedPropertiesRule, dependenciesRule, parseRequired, propertiesRule, propertyCountRule, requiredRule } from './object_rules.js';
import { keywordError, schemaError, type Rule, type Schema, type SchemaCompiler } from './rule.js';
import { boundRule, lengthRule, multipleOfRule, patternRule, refuseLoneExclusive } from './scalar_rules.js';
import { encryptRule, parseTypeSet, refuseTypeWithEncrypt } from './type_rules.js';

const KEYWORDS = new Set([
  'additionalItems', 'additionalProperties', 'allOf', 'anyOf', 'bsonType', 'dependencies', 'description', 'encrypt',
  'encryptMetadata', 'enum', 'exclusiveMaximum', 'exclusiveMinimum', 'items', 'maxItems', 'maxLength', 'maxProperties',
  'maximum', 'minItems', 'minLength', 'minProperties', 'minimum', 'multipleOf', 'not', 'oneOf', 'pattern',
  'patternProperties', 'properties', 'required', 'title', 'type', 'uniqueItems',
]);

// JSON Schema draft 4 keywords MongoDB names as unsupported rather than unknown.
const UNSUPPORTED = new Set(['$ref', '$schema', 'default', 'definitions', 'format', 'id']);

export interface SchemaOptions {
  // Validators whose level is moderate or whose action is warn may not use encrypt keywords.
  encryptKeywords: boolean;
}

// A compiled schema and, when it states one, the types it allows (the top level needs them: a
// schema whose type excludes objects matches no document).
export interface ParsedSchema extends Schema {
  types?: ReadonlySet<string>;
}

function checkKeywords(spec: Doc): void {
  for (const key of Object.keys(spec)) {
    if (KEYWORDS.has(key)) continue;
    if (UNSUPPORTED.has(key)) schemaError(ErrorCodes.FailedToParse, `$jsonSchema keyword '${key}' is not currently supported`);
    schemaError(ErrorCodes.FailedToParse, `Unknown $jsonSchema keyword: ${key}`);
  }
  for (const keyword of ['description', 'title']) {
    if (spec[keyword] !== undefined && typeof spec[keyword] !== 'string') keywordError(keyword, 'must be of type string');
  }
}

function encryptMetadataCheck(spec: unknown): void {
  if (!isPlainObject(spec)) keywordError('encryptMetadata', 'must be an object ');
  if (Object.keys(spec).length === 0) keywordError('encryptMetadata', 'cannot be an empty object ', ErrorCodes.FailedToParse);
  for (const field of Object.keys(spec)) {
    if (field !== 'algorithm' && field !== 'keyId') schemaError(40415, `BSON field 'encryptMetadata.${field}' is an unknown field.`);
  }
}

function encryptionRules(spec: Doc, options: SchemaOptions): Rule[] {
  if (spec.encrypt === undefined && spec.encryptMetadata === undefined) return [];
  if (!options.encryptKeywords) schemaError(ErrorCodes.QueryFeatureNotAllowed, 'Encryption-related validator keywords are not allowed in this context');
  if (spec.encrypt !== undefined && spec.encryptMetadata !== undefined) schemaError(ErrorCodes.FailedToParse, "Cannot specify both $jsonSchema keywords 'encrypt' and 'encryptMetadata'");
  if (spec.encryptMetadata !== undefined) encryptMetadataCheck(spec.encryptMetadata);
  return spec.encrypt === undefined ? [] : [encryptRule(spec.encrypt)];
}

// The keywords are checked and compiled in MongoDB's order, so that a schema with several faults
// is refused for the same one; the rules keep that order, which is the order of errInfo.details.
// `root`: the schema of $jsonSchema itself, which applies to whole documents.
export function compileSchema(spec: Doc, options: SchemaOptions, root = false): ParsedSchema {
  checkKeywords(spec);
  const compiler: SchemaCompiler = { subschema: (sub) => compileSchema(sub, options), sibling: (sub) => compileSchema(sub, options, root) };
  if (spec.type !== undefined && spec.bsonType !== undefined) schemaError(ErrorCodes.FailedToParse, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'");
  const typeKeyword = spec.type !== undefined ? 'type' : spec.bsonType !== undefined ? 'bsonType' : undefined;
  if (typeKeyword !== undefined && spec.encrypt !== undefined) refuseTypeWithEncrypt(typeKeyword);
  const typeSet = typeKeyword === undefined ? undefined : parseTypeSet(typeKeyword, spec[typeKeyword]);

  const rules: (Rule | undefined)[] = [];
  const optional = <T>(value: unknown, make: (v: unknown) => T): T | undefined => (value === undefined ? undefined : make(value));
  rules.push(optional(spec.pattern, patternRule));
  rules.push(optional(spec.maxLength, (v) => lengthRule('maxLength', v)));
  rules.push(optional(spec.minLength, (v) => lengthRule('minLength', v)));
  rules.push(optional(spec.multipleOf, multipleOfRule));
  for (const keyword of ['maximum', 'minimum'] as const) {
    const exclusive = spec[keyword === 'maximum' ? 'exclusiveMaximum' : 'exclusiveMinimum'];
    if (spec[keyword] !== undefined) rules.push(boundRule(keyword, spec[keyword], exclusive));
    else if (exclusive !== undefined) refuseLoneExclusive(keyword);
  }
  rules.push(optional(spec.minItems, (v) => itemCountRule('minItems', v)));
  rules.push(optional(spec.maxItems, (v) => itemCountRule('maxItems', v)));
  rules.push(optional(spec.uniqueItems, uniqueItemsRule));
  rules.push(...itemsRules(spec.items, spec.additionalItems, compiler));
  rules.push(...encryptionRules(spec, options));

  const required = optional(spec.required, parseRequired);
  rules.push(optional(spec.properties, (v) => propertiesRule(v, compiler)));
  rules.push(allowedPropertiesRule(spec.properties, spec.patternProperties, spec.additionalProperties, compiler));
  if (required !== undefined) rules.push(requiredRule(spec.required as unknown[], required));
  rules.push(optional(spec.minProperties, (v) => propertyCountRule('minProperties', v)));
  rules.push(optional(spec.maxProperties, (v) => propertyCountRule('maxProperties', v)));
  rules.push(optional(spec.dependencies, (v) => dependenciesRule(v, compiler)));

  rules.push(optional(spec.allOf, (v) => allOfRule(v, compiler)));
  rules.push(optional(spec.anyOf, (v) => anyOfRule(v, compiler)));
  rules.push(optional(spec.oneOf, (v) => oneOfRule(v, compiler)));
  rules.push(optional(spec.not, (v) => notRule(v, compiler)));
  rules.push(optional(spec.enum, (v) => enumRule(v, root)));
  rules.push(typeSet?.rule);

  const active = rules.filter((r): r is Rule => r !== undefined);
  const annotations: Doc = {};
  if (spec.title !== undefined) annotations.title = spec.title;
  if (spec.description !== undefined) annotations.description = spec.description;
  return {
    annotations,
    types: spec.encrypt !== undefined ? new Set(['binData']) : typeSet?.names,
    matches: (value) => active.every((r) => r.matches(value)),
    explain: (value) => active.flatMap((r) => (r.matches(value) ? [] : r.explain(value))),
  };
}
