import { bsonTypeName } from '../../../bson/compare.js';
import { isPlainObject } from '../../../bson/values.js';
import { countArgument } from './scalar_rules.js';
import { unorderedEqual } from './schema_values.js';
import { keywordError, restriction, withAnnotations, type Rule, type Schema, type SchemaCompiler } from './rule.js';

// The keywords on arrays: minItems, maxItems, uniqueItems, items (one schema for every element, or
// one per position) and additionalItems (the elements past items' positions).

export function itemCountRule(keyword: 'minItems' | 'maxItems', spec: unknown): Rule {
  const limit = countArgument(keyword, spec);
  const holds = (a: unknown[]): boolean => (keyword === 'maxItems' ? a.length <= limit : a.length >= limit);
  return restriction('array', holds, (a: unknown[]) => [{
    operatorName: keyword, specifiedAs: { [keyword]: spec }, reason: 'array did not match specified length', consideredValue: a, numberOfItems: a.length,
  }]);
}

function firstDuplicate(a: unknown[]): { value: unknown } | undefined {
  for (let i = 1; i < a.length; i++) {
    for (let j = 0; j < i; j++) if (unorderedEqual(a[i], a[j])) return { value: a[i] };
  }
  return undefined;
}

export function uniqueItemsRule(spec: unknown): Rule | undefined {
  if (typeof spec !== 'boolean') keywordError('uniqueItems', 'must be a boolean');
  if (!spec) return undefined;
  return restriction('array', (a: unknown[]) => firstDuplicate(a) === undefined, (a: unknown[]) => [{
    operatorName: 'uniqueItems', specifiedAs: { uniqueItems: true }, reason: 'found a duplicate item', consideredValue: a, duplicatedValue: firstDuplicate(a)!.value,
  }]);
}

// Every element from `from` on satisfies `schema`; the error names the first that does not.
function elementsFrom(from: number, schema: Schema, keyword: 'items' | 'additionalItems', reason: string): Rule {
  const firstFailing = (a: unknown[]): number => {
    for (let i = from; i < a.length; i++) if (!schema.matches(a[i])) return i;
    return -1;
  };
  return restriction('array', (a: unknown[]) => firstFailing(a) === -1, (a: unknown[]) => {
    const i = firstFailing(a);
    return [withAnnotations({ operatorName: keyword }, schema, { reason, itemIndex: i, details: schema.explain(a[i]) })];
  });
}

// items and additionalItems together, since additionalItems means something only after an
// array of items (it is checked, and ignored, otherwise).
export function itemsRules(items: unknown, additional: unknown, compiler: SchemaCompiler): Rule[] {
  const rules: Rule[] = [];
  let positions: number | undefined;
  if (Array.isArray(items)) {
    const schemas = items.map((spec) => {
      if (!isPlainObject(spec)) keywordError('items', `requires that each element of the array is an object, but found a ${bsonTypeName(spec)}`);
      return compiler.subschema(spec);
    });
    positions = schemas.length;
    const failing = (a: unknown[]): number[] => schemas.flatMap((s, i) => (i < a.length && !s.matches(a[i]) ? [i] : []));
    if (schemas.length > 0) {
      rules.push(restriction('array', (a: unknown[]) => failing(a).length === 0, (a: unknown[]) => [{
        operatorName: 'items', details: failing(a).map((i) => ({ itemIndex: i, details: schemas[i]!.explain(a[i]) })),
      }]));
    }
  } else if (isPlainObject(items)) {
    rules.push(elementsFrom(0, compiler.subschema(items), 'items', 'At least one item did not match the sub-schema'));
  } else if (items !== undefined) {
    keywordError('items', `must be an array or an object, not ${bsonTypeName(items)}`);
  }
  if (additional === undefined) return rules;
  if (typeof additional === 'boolean') {
    if (positions !== undefined && !additional) {
      const from = positions;
      rules.push(restriction('array', (a: unknown[]) => a.length <= from, (a: unknown[]) => [{
        operatorName: 'additionalItems', specifiedAs: { additionalItems: false }, reason: 'found additional items', additionalItems: a.slice(from),
      }]));
    }
  } else if (isPlainObject(additional)) {
    const schema = compiler.subschema(additional);
    if (positions !== undefined) rules.push(elementsFrom(positions, schema, 'additionalItems', 'At least one additional item did not match the sub-schema'));
  } else {
    keywordError('additionalItems', `must be either an object or a boolean, but got a ${bsonTypeName(additional)}`);
  }
  return rules;
}

