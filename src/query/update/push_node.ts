import { mongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { cloneValue, isNumber, isPlainObject, toBigIntExact } from '../../bson/values.js';
import { idElementString } from './bson_string.js';
import { identical } from './identical.js';
import { modifier, NOOP, type ModifierNode } from './modifier_node.js';
import { compilePushSort, type ElementComparator } from './push_sort.js';

interface PushSpec {
  values: unknown[];
  position?: bigint;
  slice?: bigint;
  sort?: ElementComparator;
}

const CLAUSES = new Set(['$each', '$slice', '$sort', '$position']);

export function makePushNode(arg: unknown): ModifierNode {
  const spec = parsePush(arg);
  return modifier('$push', {
    updateExisting: (old, mc) => {
      if (!Array.isArray(old)) {
        throw mongoError('BadValue', `The field '${mc.path}' must be an array but is of type ${bsonTypeName(old)} in document {${idElementString(mc.doc)}}`);
      }
      const result = performPush(old, spec);
      return identical(result, old) ? NOOP : result;
    },
    valueForNew: () => performPush([], spec),
  });
}

// The modifier form applies when the argument is a document holding $each anywhere in it;
// any other argument (a document without $each included) is the single value to push.
function parsePush(arg: unknown): PushSpec {
  if (!isPlainObject(arg) || arg.$each === undefined) return { values: [arg] };
  for (const clause of Object.keys(arg)) {
    if (!CLAUSES.has(clause)) throw mongoError('BadValue', `Unrecognized clause in $push: ${clause}`);
  }
  const each = arg.$each;
  if (!Array.isArray(each)) {
    throw mongoError('BadValue', `The argument to $each in $push must be an array but it was of type: ${bsonTypeName(each)}`);
  }
  const spec: PushSpec = { values: each };
  if (arg.$slice !== undefined) {
    spec.slice = integerClause(arg.$slice, `The value for $slice must be an integer value but was given type: ${bsonTypeName(arg.$slice)}`);
  }
  if (arg.$sort !== undefined) spec.sort = compilePushSort(arg.$sort);
  if (arg.$position !== undefined) {
    spec.position = integerClause(arg.$position, `The value for $position must be an integer value, not of type: ${bsonTypeName(arg.$position)}`);
  }
  return spec;
}

function integerClause(v: unknown, message: string): bigint {
  const n = isNumber(v) ? toBigIntExact(v) : undefined;
  if (n === undefined) throw mongoError('BadValue', message);
  return n;
}

function performPush(old: unknown[], spec: PushSpec): unknown[] {
  const values = spec.values.map(cloneValue);
  const out = [...old];
  const size = BigInt(out.length);
  const position = spec.position ?? size;
  let at: number;
  if (position >= size) at = out.length;
  else if (position >= 0n) at = Number(position);
  else at = -position < size ? Number(size + position) : 0;
  out.splice(at, 0, ...values);
  if (spec.sort) out.sort(spec.sort);
  if (spec.slice !== undefined) {
    const keep = spec.slice < 0n ? -spec.slice : spec.slice;
    if (BigInt(out.length) > keep) {
      return spec.slice >= 0n ? out.slice(0, Number(keep)) : out.slice(out.length - Number(keep));
    }
  }
  return out;
}
