import { mongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isNumber, toDouble } from '../../bson/values.js';
import { elementToString } from './bson_string.js';
import { modifier, NOOP, type ModifierNode } from './modifier_node.js';

export function makePopNode(field: string, arg: unknown): ModifierNode {
  if (!isNumber(arg)) throw mongoError('FailedToParse', `Expected a number in: ${elementToString(field, arg)}`);
  const direction = toDouble(arg);
  if (direction !== 1 && direction !== -1) throw mongoError('FailedToParse', `$pop expects 1 or -1, found: ${direction}`);
  return modifier('$pop', {
    allowCreation: false,
    updateExisting: (old, mc) => {
      if (!Array.isArray(old)) {
        throw mongoError('TypeMismatch', `Path '${mc.path}' contains an element of non-array type '${bsonTypeName(old)}'`);
      }
      if (old.length === 0) return NOOP;
      return direction === 1 ? old.slice(0, -1) : old.slice(1);
    },
    valueForNew: () => undefined,
  });
}
