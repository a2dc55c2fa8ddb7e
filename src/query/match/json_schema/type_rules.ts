import type { Binary } from 'bson';
import { ErrorCodes } from '../../../base/error_codes.js';
import { bsonTypeName, bsonTypeNumbers } from '../../../bson/compare.js';
import { bsonTag, isPlainObject } from '../../../bson/values.js';
import { typeIn } from '../leaf_predicates.js';
import { keywordError, schemaError, type Rule } from './rule.js';

// `bsonType` takes $type's names; `type` takes JSON Schema's, which name fewer types ('boolean' is
// BSON's 'bool'; JSON's 'integer' is refused, as MongoDB does). Both take 'number' for every numeric type.
const JSON_TYPES: Record<string, string> = { array: 'array', boolean: 'bool', null: 'null', object: 'object', string: 'string', number: 'number' };

export interface TypeSet {
  names: ReadonlySet<string>;
  rule: Rule;
}

export function parseTypeSet(keyword: 'type' | 'bsonType', spec: unknown): TypeSet {
  if (typeof spec !== 'string' && !Array.isArray(spec)) keywordError(keyword, 'must be either a string or an array of strings');
  const aliases = typeof spec === 'string' ? [spec] : spec;
  const seen = new Set<string>();
  const names = new Set<string>();
  for (const alias of aliases) {
    if (typeof alias !== 'string') keywordError(keyword, 'array elements must be strings');
    if (alias === 'integer') schemaError(ErrorCodes.FailedToParse, "$jsonSchema type 'integer' is not currently supported.");
    if (seen.has(alias)) keywordError(keyword, `has duplicate value: ${alias}`, ErrorCodes.FailedToParse);
    seen.add(alias);
    const name = keyword === 'type' ? JSON_TYPES[alias] : alias === 'number' || Object.hasOwn(bsonTypeNumbers, alias) ? alias : undefined;
    if (name === undefined) schemaError(ErrorCodes.BadValue, `Unknown type name alias: ${alias}`);
    names.add(name);
  }
  if (names.size === 0) keywordError(keyword, 'must name at least one type', ErrorCodes.FailedToParse);
  const holds = typeIn(names);
  return {
    names,
    rule: {
      matches: holds,
      // A missing field is explained by `required`, or is not an error.
      explain: (value) => (value === undefined ? [] : [{
        operatorName: keyword, specifiedAs: { [keyword]: spec }, reason: 'type did not match', consideredValue: value, consideredType: bsonTypeName(value),
      }]),
    },
  };
}

const ENCRYPT_FIELDS = new Set(['keyId', 'algorithm', 'bsonType']);
const ENCRYPTED_SUBTYPE = 6;
// A client-side-encrypted value's blob: a marker byte, the key's 16-byte UUID, then the BSON type
// of the value it hides.
const ORIGINAL_TYPE_OFFSET = 17;

// `encrypt`: the value is BinData of the encrypted subtype (6), and when the keyword names a
// bsonType, the blob says it hides a value of that type. Nothing is decrypted.
export function encryptRule(spec: unknown): Rule {
  if (!isPlainObject(spec)) keywordError('encrypt', 'must be an object ');
  for (const field of Object.keys(spec)) {
    if (!ENCRYPT_FIELDS.has(field)) schemaError(40415, `BSON field 'encrypt.${field}' is an unknown field.`);
  }
  const hidden = spec.bsonType === undefined ? undefined : parseTypeSet('bsonType', spec.bsonType).names;
  const blob = (value: unknown): Uint8Array | undefined => {
    if (bsonTag(value) !== 'Binary') return undefined;
    const bin = value as Binary;
    return bin.sub_type === ENCRYPTED_SUBTYPE ? bin.buffer.subarray(0, bin.position) : undefined;
  };
  const hiddenTypeHolds = (bytes: Uint8Array): boolean => {
    if (hidden === undefined) return true;
    const code = bytes[ORIGINAL_TYPE_OFFSET];
    return [...hidden].some((name) => (name === 'number' ? [1, 16, 18, 19].includes(code!) : bsonTypeNumbers[name] === code));
  };
  return {
    matches: (value) => {
      const bytes = blob(value);
      return bytes !== undefined && hiddenTypeHolds(bytes);
    },
    explain: (value) => {
      if (value === undefined) return [];
      const bytes = blob(value);
      return [{ operatorName: 'encrypt', reason: bytes === undefined ? 'value was not encrypted' : 'encrypted value has wrong type' }];
    },
  };
}

export function refuseTypeWithEncrypt(keyword: 'type' | 'bsonType'): never {
  return schemaError(ErrorCodes.FailedToParse, `$jsonSchema keyword 'encrypt' cannot be used in conjunction with '${keyword}', 'encrypt' implies type 'bsonType::BinData'`);
}
