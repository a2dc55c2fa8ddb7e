import { mongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, Long, numberKind, isNumber, toBigIntExact } from '../../bson/values.js';
import { elementToString, idElementString } from './bson_string.js';
import { identical } from './identical.js';
import { modifier, NOOP, type ModifierNode } from './modifier_node.js';

type BitOp = 'and' | 'or' | 'xor';

export function makeBitNode(arg: unknown): ModifierNode {
  const ops = parseBitOps(arg);
  const run = (start: unknown) => ops.reduce((acc, [op, operand]) => bitwise(op, acc, operand), start);
  return modifier('$bit', {
    updateExisting: (old, mc) => {
      if (!isIntegral(old)) {
        throw mongoError('BadValue', `Cannot apply $bit to a value of non-integral type.${idElementString(mc.doc)} has the field ${mc.field} of non-integer type ${bsonTypeName(old)}`);
      }
      const result = run(old);
      return identical(result, old) ? NOOP : result;
    },
    valueForNew: () => run(0),
  });
}

function parseBitOps(arg: unknown): Array<[BitOp, unknown]> {
  if (!isPlainObject(arg)) {
    throw mongoError('BadValue', `The $bit modifier is not compatible with a ${bsonTypeName(arg)}.  You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}.`);
  }
  const ops: Array<[BitOp, unknown]> = [];
  for (const [name, operand] of Object.entries(arg)) {
    if (name !== 'and' && name !== 'or' && name !== 'xor') {
      throw mongoError('BadValue', `The $bit modifier only supports 'and', 'or', and 'xor', not '${name}' which is an unknown operator: {${elementToString(name, operand)}}`);
    }
    if (!isIntegral(operand)) {
      throw mongoError('BadValue', `The $bit modifier field must be an Integer(32/64 bit); a '${bsonTypeName(operand)}' is not supported here: {${elementToString(name, operand)}}`);
    }
    ops.push([name, operand]);
  }
  if (ops.length === 0) {
    throw mongoError('BadValue', 'You must pass in at least one bitwise operation. The format is: {$bit: {field: {and/or/xor: #}}');
  }
  return ops;
}

function isIntegral(v: unknown): boolean {
  if (!isNumber(v)) return false;
  const kind = numberKind(v);
  return kind === 'int' || kind === 'long';
}

// int with int stays int; a long on either side makes a long, as with MongoDB's SafeNum.
function bitwise(op: BitOp, a: unknown, b: unknown): unknown {
  const x = toBigIntExact(a)!;
  const y = toBigIntExact(b)!;
  const r = op === 'and' ? x & y : op === 'or' ? x | y : x ^ y;
  if (numberKind(a) === 'int' && numberKind(b) === 'int') return Number(BigInt.asIntN(32, r));
  return Long.fromBigInt(BigInt.asIntN(64, r));
}
