import { mongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { cloneValue, isNumber, numericAdd, numericMultiply } from '../../bson/values.js';
import { elementToString, idElementString } from './bson_string.js';
import { identical } from './identical.js';
import { modifier, NOOP, type ModifierNode } from './modifier_node.js';

type ArithmeticOp = '$inc' | '$mul';

export function makeArithmeticNode(op: ArithmeticOp, field: string, arg: unknown): ModifierNode {
  if (!isNumber(arg)) {
    const verb = op === '$inc' ? 'increment' : 'multiply';
    throw mongoError('TypeMismatch', `Cannot ${verb} with non-numeric argument: {${elementToString(field, arg)}}`);
  }
  const combine = op === '$inc' ? numericAdd : numericMultiply;
  return modifier(op, {
    updateExisting: (old, mc) => {
      if (!isNumber(old)) {
        throw mongoError('TypeMismatch', `Cannot apply ${op} to a value of non-numeric type. {${idElementString(mc.doc)}} has the field '${mc.field}' of non-numeric type ${bsonTypeName(old)}`);
      }
      const result = combine(old, arg);
      return identical(result, old) ? NOOP : result;
    },
    // A missing field counts as int 0: $inc yields the argument, $mul a zero of its type.
    valueForNew: () => (op === '$inc' ? cloneValue(arg) : numericMultiply(arg, 0)),
  });
}
