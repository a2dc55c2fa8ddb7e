import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Decimal128, Double, Int32, Long, ObjectId } from 'bson';
import type { Doc } from '../../../bson/values.js';
import { compileFilter } from '../matcher.js';
import { compileJsonSchema } from './json_schema.js';

type Case = [schema: Doc, doc: Doc, expected: boolean];

function check(cases: Case[]): void {
  for (const [schema, doc, expected] of cases) {
    const actual = compileFilter({ $jsonSchema: schema }).matches(doc);
    assert.equal(actual, expected, `${JSON.stringify(schema)} on ${JSON.stringify(doc)}`);
  }
}

function rejects(schema: unknown, code: number, message: string, options: { encryptKeywords?: boolean } = {}): void {
  assert.throws(() => compileFilter({ $jsonSchema: schema }, options), (err: { code: number; message: string }) => {
    assert.equal(err.code, code, err.message);
    assert.equal(err.message, message);
    return true;
  });
}

function details(schema: Doc, doc: Doc): Doc {
  const compiled = compileJsonSchema(schema, { encryptKeywords: true });
  assert.equal(compiled.matches(doc), false, 'the document fails the schema');
  return compiled.explain(doc);
}

test('bsonType and type, with their aliases, on properties; the top level must allow objects', () => {
  check([
    [{ properties: { a: { bsonType: 'int' } } }, { a: 1 }, true],
    [{ properties: { a: { bsonType: 'int' } } }, { a: new Double(1) }, false],
    [{ properties: { a: { bsonType: 'number' } } }, { a: Long.fromNumber(1) }, true],
    [{ properties: { a: { bsonType: 'number' } } }, { a: Decimal128.fromString('1.5') }, true],
    [{ properties: { a: { bsonType: 'number' } } }, { a: '1' }, false],
    [{ properties: { a: { bsonType: ['string', 'null'] } } }, { a: null }, true],
    [{ properties: { a: { bsonType: 'objectId' } } }, { a: new ObjectId() }, true],
    [{ properties: { a: { bsonType: 'array' } } }, { a: [1] }, true],
    [{ properties: { a: { bsonType: 'int' } } }, { a: [1] }, false],
    [{ properties: { a: { type: 'boolean' } } }, { a: true }, true],
    [{ properties: { a: { type: 'number' } } }, { a: new Int32(3) }, true],
    [{ properties: { a: { type: 'object' } } }, { a: [] }, false],
    [{ properties: { a: { bsonType: 'int' } } }, {}, true],
    [{ bsonType: 'object' }, { a: 1 }, true],
    [{ type: ['object', 'string'] }, { a: 1 }, true],
    [{ bsonType: 'string' }, { a: 1 }, false],
  ]);
});

test('string keywords: pattern, minLength and maxLength (code points), only on strings', () => {
  check([
    [{ properties: { s: { pattern: '^a+$' } } }, { s: 'aaa' }, true],
    [{ properties: { s: { pattern: '^a+$' } } }, { s: 'ab' }, false],
    [{ properties: { s: { pattern: '^a+$' } } }, { s: 5 }, true],
    [{ properties: { s: { bsonType: 'string', pattern: '^a+$' } } }, { s: 5 }, false],
    [{ properties: { s: { minLength: 2, maxLength: 3 } } }, { s: 'ab' }, true],
    [{ properties: { s: { maxLength: 2 } } }, { s: 'abc' }, false],
    [{ properties: { s: { maxLength: 2 } } }, { s: '😀😀' }, true],
    [{ properties: { s: { minLength: 2 } } }, { s: 'a' }, false],
    [{ properties: { s: { minLength: 2 } } }, { s: ['a'] }, true],
  ]);
});

test('number keywords: minimum, maximum, their exclusive forms and multipleOf, across numeric types', () => {
  check([
    [{ properties: { n: { minimum: 1, maximum: 3 } } }, { n: 3 }, true],
    [{ properties: { n: { minimum: 1, maximum: 3 } } }, { n: Long.fromNumber(4) }, false],
    [{ properties: { n: { maximum: 3, exclusiveMaximum: true } } }, { n: new Double(3) }, false],
    [{ properties: { n: { minimum: 1, exclusiveMinimum: true } } }, { n: Decimal128.fromString('1.0001') }, true],
    [{ properties: { n: { minimum: 1, exclusiveMinimum: false } } }, { n: 1 }, true],
    [{ properties: { n: { minimum: 5 } } }, { n: 'x' }, true],
    [{ properties: { n: { multipleOf: 0.1 } } }, { n: new Double(0.3) }, true],
    [{ properties: { n: { multipleOf: 3 } } }, { n: 9 }, true],
    [{ properties: { n: { multipleOf: 3 } } }, { n: 10 }, false],
    [{ properties: { n: { multipleOf: 2 } } }, { n: new Double(Number.NaN) }, false],
    [{ minimum: 100 }, { n: 1 }, true],
  ]);
});

test('array keywords: minItems, maxItems, uniqueItems (fields in any order), items in both forms, additionalItems', () => {
  check([
    [{ properties: { a: { minItems: 1, maxItems: 2 } } }, { a: [1] }, true],
    [{ properties: { a: { maxItems: 2 } } }, { a: [1, 2, 3] }, false],
    [{ properties: { a: { minItems: 1 } } }, { a: [] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [1, new Double(1)] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [{ x: 1, y: 2 }, { y: 2, x: 1 }] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [1, '1'] }, true],
    [{ properties: { a: { uniqueItems: false } } }, { a: [1, 1] }, true],
    [{ properties: { a: { items: { bsonType: 'int' } } } }, { a: [1, 2] }, true],
    [{ properties: { a: { items: { bsonType: 'int' } } } }, { a: [1, 'x'] }, false],
    [{ properties: { a: { items: [{ bsonType: 'int' }, { bsonType: 'string' }] } } }, { a: [1, 'x', true] }, true],
    [{ properties: { a: { items: [{ bsonType: 'int' }, { bsonType: 'string' }] } } }, { a: ['x'] }, false],
    [{ properties: { a: { items: [{ bsonType: 'int' }], additionalItems: false } } }, { a: [1, 2] }, false],
    [{ properties: { a: { items: [{ bsonType: 'int' }], additionalItems: false } } }, { a: [1] }, true],
    [{ properties: { a: { items: [{}], additionalItems: { bsonType: 'string' } } } }, { a: [1, 's', 2] }, false],
    [{ properties: { a: { items: { bsonType: 'int' }, additionalItems: false } } }, { a: [1, 2] }, true],
    [{ properties: { a: { items: { bsonType: 'int' } } } }, { a: 5 }, true],
  ]);
});

test('object keywords: properties, required, additionalProperties, patternProperties, min/maxProperties, dependencies', () => {
  check([
    [{ required: ['a', 'b'] }, { a: 1, b: 2 }, true],
    [{ required: ['a', 'b'] }, { a: 1 }, false],
    [{ properties: { o: { required: ['x'] } } }, { o: { y: 1 } }, false],
    [{ properties: { o: { required: ['x'] } } }, { o: 5 }, true],
    [{ properties: { o: { properties: { x: { bsonType: 'string' } } } } }, { o: { x: 1 } }, false],
    [{ properties: { _id: {}, a: {} }, additionalProperties: false }, { _id: 1, a: 1 }, true],
    [{ properties: { a: {} }, additionalProperties: false }, { _id: 1, a: 1 }, false],
    [{ additionalProperties: { bsonType: 'int' } }, { _id: 1, a: 2 }, true],
    [{ additionalProperties: { bsonType: 'int' } }, { _id: 1, a: 's' }, false],
    [{ patternProperties: { '^s_': { bsonType: 'string' } } }, { s_a: 'x', n: 1 }, true],
    [{ patternProperties: { '^s_': { bsonType: 'string' } } }, { s_a: 1 }, false],
    [{ patternProperties: { '^s_': {} }, additionalProperties: false }, { s_a: 1 }, true],
    [{ minProperties: 2 }, { _id: 1 }, false],
    [{ maxProperties: 2 }, { _id: 1, a: 1 }, true],
    [{ properties: { o: { maxProperties: 1 } } }, { o: { a: 1, b: 2 } }, false],
    [{ dependencies: { a: ['b'] } }, { a: 1 }, false],
    [{ dependencies: { a: ['b'] } }, { b: 1 }, true],
    [{ dependencies: { a: { required: ['c'] } } }, { a: 1, c: 1 }, true],
    [{ dependencies: { a: { required: ['c'] } } }, { a: 1 }, false],
    [{ required: ['a.b'] }, { a: { b: 1 } }, true],
    [{ required: ['a.b'] }, { a: [{ c: 1 }, { b: 1 }] }, true],
    [{ required: ['a.b'] }, { 'a': { c: 1 } }, false],
    [{ properties: { 'a.b': { bsonType: 'string' } } }, { a: { b: 1 } }, false],
    [{ properties: { 'a.b': { bsonType: 'string' } } }, { a: { b: 'x' } }, true],
  ]);
});

test('logical keywords and enum: allOf, anyOf, oneOf, not; enum with unordered fields and at the top level', () => {
  const int = { properties: { a: { bsonType: 'int' } } };
  const small = { properties: { a: { maximum: 5 } } };
  check([
    [{ allOf: [int, small] }, { a: 3 }, true],
    [{ allOf: [int, small] }, { a: 9 }, false],
    [{ anyOf: [int, small] }, { a: 9 }, true],
    [{ anyOf: [int, small] }, { a: new Double(9) }, false],
    [{ oneOf: [int, small] }, { a: 3 }, false],
    [{ oneOf: [int, small] }, { a: 9 }, true],
    [{ not: int }, { a: 1 }, false],
    [{ not: int }, { a: 's' }, true],
    [{ properties: { a: { enum: [1, 'x', { b: 1, c: 2 }] } } }, { a: new Double(1) }, true],
    [{ properties: { a: { enum: [1, 'x', { b: 1, c: 2 }] } } }, { a: { c: 2, b: 1 } }, true],
    [{ properties: { a: { enum: [1, 'x'] } } }, { a: 2 }, false],
    [{ properties: { a: { enum: [[1, 2]] } } }, { a: [1, 2] }, true],
    [{ properties: { a: { enum: [[1, 2]] } } }, { a: 1 }, false],
    [{ enum: [{ _id: 1, a: 1 }, 5] }, { a: 1, _id: 1 }, true],
    [{ enum: [5] }, { _id: 1 }, false],
    [{ title: 't', description: 'd', properties: { a: { title: 'x' } } }, { a: 1 }, true],
  ]);
});

test('encrypt: BinData of subtype 6 only, never traversing arrays', () => {
  const encrypted = new Binary(Buffer.alloc(20), 6);
  check([
    [{ properties: { b: { encrypt: {} } } }, { b: encrypted }, true],
    [{ properties: { b: { encrypt: {} } } }, { b: new Binary(Buffer.alloc(20), 0) }, false],
    [{ properties: { b: { encrypt: {} } } }, { b: [encrypted] }, false],
    [{ properties: { b: { encrypt: {} } } }, { c: 1 }, true],
  ]);
});

test('$jsonSchema composes with the query language: inside $or, $nor, and as a document-level $elemMatch', () => {
  const schema = { required: ['x'] };
  assert.equal(compileFilter({ $or: [{ $jsonSchema: schema }, { y: 1 }] }).matches({ y: 1 }), true);
  assert.equal(compileFilter({ $nor: [{ $jsonSchema: schema }] }).matches({ x: 1 }), false);
  assert.equal(compileFilter({ a: { $elemMatch: { $jsonSchema: schema } } }).matches({ a: [{ y: 1 }, { x: 1 }] }), true);
  assert.equal(compileFilter({ $jsonSchema: schema, z: 1 }).matches({ x: 1, z: 2 }), false);
});

test('an unknown or unsupported keyword, or a keyword of the wrong type, is refused with MongoDB\'s error', () => {
  rejects(5, 14, '$jsonSchema must be an object');
  rejects({ foo: 1 }, 9, 'Unknown $jsonSchema keyword: foo');
  rejects({ properties: { a: { bsonTyp: 'int' } } }, 9, 'Unknown $jsonSchema keyword: bsonTyp');
  rejects({ $ref: '#/a' }, 9, "$jsonSchema keyword '$ref' is not currently supported");
  rejects({ format: 'email' }, 9, "$jsonSchema keyword 'format' is not currently supported");
  rejects({ type: 'integer' }, 9, "$jsonSchema type 'integer' is not currently supported.");
  rejects({ bsonType: 'integer' }, 9, "$jsonSchema type 'integer' is not currently supported.");
  rejects({ type: 'int' }, 2, 'Unknown type name alias: int');
  rejects({ bsonType: 'whole' }, 2, 'Unknown type name alias: whole');
  rejects({ bsonType: 1 }, 14, "$jsonSchema keyword 'bsonType' must be either a string or an array of strings");
  rejects({ bsonType: ['int', 'int'] }, 9, "$jsonSchema keyword 'bsonType' has duplicate value: int");
  rejects({ bsonType: [] }, 9, "$jsonSchema keyword 'bsonType' must name at least one type");
  rejects({ type: 'object', bsonType: 'object' }, 9, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'");
  rejects({ required: 'a' }, 14, "$jsonSchema keyword 'required' must be an array, but found an element of type string");
  rejects({ required: [] }, 9, "$jsonSchema keyword 'required' cannot be an empty array");
  rejects({ required: ['a', 'a'] }, 9, "$jsonSchema keyword 'required' array cannot contain duplicate values");
  rejects({ properties: 1 }, 14, "$jsonSchema keyword 'properties' must be an object");
  rejects({ properties: { a: 1 } }, 14, "Nested schema for $jsonSchema property 'a' must be an object");
  rejects({ minimum: 'a' }, 14, "$jsonSchema keyword 'minimum' must be a number");
  rejects({ exclusiveMaximum: true }, 9, "$jsonSchema keyword 'maximum' must be a present if exclusiveMaximum is present");
  rejects({ maximum: 1, exclusiveMaximum: 1 }, 14, "$jsonSchema keyword 'exclusiveMaximum' must be a boolean");
  rejects({ minLength: -1 }, 9, 'Expected a positive number in: minLength: -1');
  rejects({ maxItems: 1.5 }, 9, 'Expected an integer: maxItems: 1.5');
  rejects({ maxProperties: 'a' }, 9, 'Expected a number in: maxProperties: "a"');
  rejects({ multipleOf: 0 }, 9, "$jsonSchema keyword 'multipleOf' must have a positive value");
  rejects({ pattern: 1 }, 14, "$jsonSchema keyword 'pattern' must be a string");
  rejects({ enum: [] }, 9, "$jsonSchema keyword 'enum' cannot be an empty array");
  rejects({ enum: [1, new Double(1)] }, 9, "$jsonSchema keyword 'enum' array cannot contain duplicate values.");
  rejects({ enum: 1 }, 14, "$jsonSchema keyword 'enum' must be an array, but found an element of type int");
  rejects({ allOf: [] }, 2, "$jsonSchema keyword 'allOf' must be a non-empty array");
  rejects({ anyOf: {} }, 14, "$jsonSchema keyword 'anyOf' must be an array");
  rejects({ oneOf: [1] }, 14, "$jsonSchema keyword 'oneOf' must be an array of objects, but found an element of type int");
  rejects({ not: [] }, 14, "$jsonSchema keyword 'not' must be an object, but found an element of type array");
  rejects({ uniqueItems: 1 }, 14, "$jsonSchema keyword 'uniqueItems' must be a boolean");
  rejects({ items: 1 }, 14, "$jsonSchema keyword 'items' must be an array or an object, not int");
  rejects({ additionalItems: 1 }, 14, "$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a int");
  rejects({ additionalProperties: 1 }, 14, "$jsonSchema keyword 'additionalProperties' must be an object or a boolean");
  rejects({ patternProperties: { a: 1 } }, 14, "$jsonSchema keyword 'patternProperties' has property 'a' which is not an object");
  rejects({ dependencies: { a: 1 } }, 14, "property 'a' in $jsonSchema keyword 'dependencies' must be either an object or an array");
  rejects({ dependencies: { a: ['b', 'b'] } }, 9, "array 'a' in $jsonSchema keyword 'dependencies' contains duplicate element: b");
  rejects({ title: 1 }, 14, "$jsonSchema keyword 'title' must be of type string");
  rejects({ description: {} }, 14, "$jsonSchema keyword 'description' must be of type string");
  rejects({ properties: { b: { encrypt: {}, bsonType: 'object' } } }, 9, "$jsonSchema keyword 'encrypt' cannot be used in conjunction with 'bsonType', 'encrypt' implies type 'bsonType::BinData'");
  rejects({ properties: { b: { encrypt: {} } } }, 224, 'Encryption-related validator keywords are not allowed in this context', { encryptKeywords: false });
});

test('errInfo.details of the students example: failing properties, nested, then the missing required ones', () => {
  const schema = {
    bsonType: 'object',
    required: ['name', 'year', 'major', 'address'],
    properties: {
      name: { bsonType: 'string', description: 'must be a string and is required' },
      year: { bsonType: 'int', minimum: 2017, maximum: 3017, description: 'must be an integer in [ 2017, 3017 ] and is required' },
      major: { enum: ['Math', 'English', 'Computer Science', 'History', null], description: 'can only be one of the enum values and is required' },
      gpa: { bsonType: ['double'], description: 'must be a double if the field exists' },
      address: {
        bsonType: 'object',
        required: ['city'],
        properties: {
          street: { bsonType: 'string', description: 'must be a string if the field exists' },
          city: { bsonType: 'string', description: 'must be a string and is required' },
        },
      },
    },
  };
  const doc = { year: 2020, major: 'Software Engineering', gpa: new Double(5), address: { city: 'NYC', street: 5 } };
  assert.deepEqual(details(schema, doc), {
    operatorName: '$jsonSchema',
    schemaRulesNotSatisfied: [
      {
        operatorName: 'properties',
        propertiesNotSatisfied: [
          {
            propertyName: 'major',
            description: 'can only be one of the enum values and is required',
            details: [{ operatorName: 'enum', specifiedAs: { enum: ['Math', 'English', 'Computer Science', 'History', null] }, reason: 'value was not found in enum', consideredValue: 'Software Engineering' }],
          },
          {
            propertyName: 'address',
            details: [{
              operatorName: 'properties',
              propertiesNotSatisfied: [{
                propertyName: 'street',
                description: 'must be a string if the field exists',
                details: [{ operatorName: 'bsonType', specifiedAs: { bsonType: 'string' }, reason: 'type did not match', consideredValue: 5, consideredType: 'int' }],
              }],
            }],
          },
        ],
      },
      { operatorName: 'required', specifiedAs: { required: ['name', 'year', 'major', 'address'] }, missingProperties: ['name'] },
    ],
  });
});

test('errInfo.details of array, object and logical keywords', () => {
  assert.deepEqual(details({ title: 'T', properties: { v: { bsonType: 'array', items: { bsonType: 'string', enum: ['one', 'two'] }, uniqueItems: true } } }, { v: ['two', 'two', 3] }), {
    operatorName: '$jsonSchema',
    title: 'T',
    schemaRulesNotSatisfied: [{
      operatorName: 'properties',
      propertiesNotSatisfied: [{
        propertyName: 'v',
        details: [
          { operatorName: 'uniqueItems', specifiedAs: { uniqueItems: true }, reason: 'found a duplicate item', consideredValue: ['two', 'two', 3], duplicatedValue: 'two' },
          {
            operatorName: 'items', reason: 'At least one item did not match the sub-schema', itemIndex: 2,
            details: [
              { operatorName: 'enum', specifiedAs: { enum: ['one', 'two'] }, reason: 'value was not found in enum', consideredValue: 3 },
              { operatorName: 'bsonType', specifiedAs: { bsonType: 'string' }, reason: 'type did not match', consideredValue: 3, consideredType: 'int' },
            ],
          },
        ],
      }],
    }],
  });
  assert.deepEqual(details({ properties: { a: {} }, additionalProperties: false, minProperties: 4 }, { _id: 1, a: 1, b: 2 }).schemaRulesNotSatisfied, [
    { operatorName: 'additionalProperties', specifiedAs: { additionalProperties: false }, additionalProperties: ['_id', 'b'] },
    { operatorName: 'minProperties', specifiedAs: { minProperties: 4 }, reason: 'specified number of properties was not satisfied', numberOfProperties: 3 },
  ]);
  assert.deepEqual(details({ anyOf: [{ required: ['a'] }, { description: 'b please', required: ['b'] }] }, { c: 1 }).schemaRulesNotSatisfied, [{
    operatorName: 'anyOf',
    schemasNotSatisfied: [
      { index: 0, details: [{ operatorName: 'required', specifiedAs: { required: ['a'] }, missingProperties: ['a'] }] },
      { index: 1, description: 'b please', details: [{ operatorName: 'required', specifiedAs: { required: ['b'] }, missingProperties: ['b'] }] },
    ],
  }]);
  assert.deepEqual(details({ oneOf: [{ required: ['a'] }, { required: ['b'] }] }, { a: 1, b: 1 }).schemaRulesNotSatisfied, [
    { operatorName: 'oneOf', reason: 'more than one subschema matched', matchingSchemaIndexes: [0, 1] },
  ]);
  assert.deepEqual(details({ dependencies: { a: ['b', 'c'], d: { required: ['e'] } } }, { a: 1, c: 1, d: 1 }).schemaRulesNotSatisfied, [{
    operatorName: 'dependencies',
    failingDependencies: [
      { conditionalProperty: 'a', missingProperties: ['b'] },
      { conditionalProperty: 'd', details: [{ operatorName: 'required', specifiedAs: { required: ['e'] }, missingProperties: ['e'] }] },
    ],
  }]);
  assert.deepEqual(details({ properties: { n: { minimum: 5, exclusiveMinimum: true, multipleOf: 2 } } }, { n: 5 }).schemaRulesNotSatisfied, [{
    operatorName: 'properties',
    propertiesNotSatisfied: [{
      propertyName: 'n',
      details: [
        { operatorName: 'multipleOf', specifiedAs: { multipleOf: 2 }, reason: 'considered value is not a multiple of the specified value', consideredValue: 5 },
        { operatorName: 'minimum', specifiedAs: { minimum: 5, exclusiveMinimum: true }, reason: 'comparison failed', consideredValue: 5 },
      ],
    }],
  }]);
  assert.deepEqual(details({ not: { required: ['a'] } }, { a: 1 }).schemaRulesNotSatisfied, [{ operatorName: 'not', reason: 'child expression matched' }]);
  assert.deepEqual(details({ enum: [1, 'a'] }, { _id: 1 }).schemaRulesNotSatisfied, [
    { operatorName: 'enum', specifiedAs: { enum: [1, 'a'] }, reason: 'expression always evaluates to false' },
  ]);
  assert.deepEqual(details({ allOf: [{ enum: [1] }] }, { _id: 1 }).schemaRulesNotSatisfied, [{
    operatorName: 'allOf',
    schemasNotSatisfied: [{ index: 0, details: [{ operatorName: 'enum', specifiedAs: { enum: [1] }, reason: 'expression always evaluates to false' }] }],
  }], 'allOf applies its schemas to the document itself');
  assert.deepEqual(details({ bsonType: 'string' }, { a: 1 }), {
    operatorName: '$jsonSchema', specifiedAs: { $jsonSchema: { bsonType: 'string' } }, reason: 'expression always evaluates to false',
  });
});
