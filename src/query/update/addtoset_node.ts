import { mongoError } from '../../base/errors.js';
import { bsonTypeName, valuesEqual } from '../../bson/compare.js';
import { cloneValue, isPlainObject } from '../../bson/values.js';
import { valueToString } from './bson_string.js';
import { modifier, NOOP, type ModifierNode } from './modifier_node.js';

export function makeAddToSetNode(arg: unknown): ModifierNode {
  const values = withoutDuplicates(parseAddToSet(arg));
  const missingFrom = (arr: readonly unknown[]) => values.filter((v) => !arr.some((x) => valuesEqual(x, v)));
  return modifier('$addToSet', {
    updateExisting: (old, mc) => {
      if (!Array.isArray(old)) {
        throw mongoError('BadValue', `Cannot apply $addToSet to non-array field. Field named '${mc.field}' has non-array type ${bsonTypeName(old)}`);
      }
      const added = missingFrom(old);
      return added.length === 0 ? NOOP : [...old, ...added.map(cloneValue)];
    },
    valueForNew: () => values.map(cloneValue),
  });
}

// Unlike $push, only a leading $each selects the modifier form.
function parseAddToSet(arg: unknown): unknown[] {
  if (!isPlainObject(arg)) return [arg];
  const keys = Object.keys(arg);
  if (keys[0] !== '$each') return [arg];
  const each = arg.$each;
  if (!Array.isArray(each)) {
    throw mongoError('TypeMismatch', `The argument to $each in $addToSet must be an array but it was of type ${bsonTypeName(each)}`);
  }
  if (keys.length > 1) throw mongoError('BadValue', `Found unexpected fields after $each in $addToSet: ${valueToString(arg)}`);
  return each;
}

function withoutDuplicates(values: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of values) if (!out.some((x) => valuesEqual(x, v))) out.push(v);
  return out;
}
