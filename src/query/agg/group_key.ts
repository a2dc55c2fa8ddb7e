import { bsonTag, isNumber, isPlainObject, toDouble, type Decimal128, type Long } from '../../bson/values.js';

// A string that is equal for two values exactly when MongoDB's $group would put them in the same
// group: numbers by value across widths, objects by ordered fields, everything else by type+value.
export function groupKey(v: unknown): string {
  if (v === undefined || v === null) return 'n';
  if (typeof v === 'string') return 's' + JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'T' : 'F';
  if (isNumber(v)) return 'N' + numberKey(v);
  if (v instanceof Date) return 'D' + v.getTime();
  if (Array.isArray(v)) return '[' + v.map(groupKey).join(',') + ']';
  if (isPlainObject(v)) {
    return '{' + Object.keys(v).filter((k) => v[k] !== undefined).map((k) => JSON.stringify(k) + ':' + groupKey(v[k])).join(',') + '}';
  }
  const tag = bsonTag(v) ?? 'unknown';
  if (tag === 'BSONSymbol') return 's' + JSON.stringify(String((v as { value: string }).value));
  const json = (v as { toJSON?: () => unknown }).toJSON?.();
  return tag + ':' + (json === undefined ? String(v) : JSON.stringify(json));
}

function numberKey(v: unknown): string {
  const tag = bsonTag(v);
  if (tag === 'Long') return (v as Long).toBigInt().toString();
  const d = tag === 'Decimal128' ? Number((v as Decimal128).toString()) : toDouble(v);
  if (Number.isInteger(d) && Math.abs(d) >= 2 ** 53) return BigInt(d).toString();
  if (Object.is(d, -0)) return '0';
  return String(d);
}
