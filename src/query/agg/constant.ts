import { isPlainObject } from '../../bson/values.js';

// The value of an expression that is a constant at parse time (a literal or $literal), for
// operators whose arguments MongoDB requires to be constant ($getField's field).
export function constantOf(expr: unknown): { value: unknown } | undefined {
  if (typeof expr === 'string') return expr.startsWith('$') ? undefined : { value: expr };
  if (Array.isArray(expr)) return undefined;
  if (isPlainObject(expr)) {
    const keys = Object.keys(expr);
    return keys.length === 1 && keys[0] === '$literal' ? { value: expr.$literal } : undefined;
  }
  return { value: expr };
}
