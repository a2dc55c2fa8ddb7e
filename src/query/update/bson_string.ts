import { bsonTag, isPlainObject, toDouble, type Decimal128, type Timestamp, type Binary, type BSONRegExp, type ObjectId, type Long } from '../../bson/values.js';

// Values rendered the way MongoDB's BSONElement::toString renders them, because update error
// messages embed documents and elements in that form (`{_id: 1}`, `a: [ 1, 2 ]`).
export function valueToString(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) && Math.abs(v) <= 2147483647 ? String(v) : doubleToString(v);
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[ ${v.map(valueToString).join(', ')} ]`;
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    return keys.length === 0 ? '{}' : `{ ${keys.map((k) => `${k}: ${valueToString(v[k])}`).join(', ')} }`;
  }
  switch (bsonTag(v)) {
    case 'Double': return doubleToString(toDouble(v));
    case 'Int32': return String(toDouble(v));
    case 'Long': return (v as Long).toString();
    case 'Decimal128': return `NumberDecimal("${(v as Decimal128).toString()}")`;
    case 'ObjectId': return `ObjectId('${(v as ObjectId).toHexString()}')`;
    case 'Timestamp': return `Timestamp(${(v as Timestamp).t}, ${(v as Timestamp).i})`;
    case 'BSONRegExp': return `/${(v as BSONRegExp).pattern}/${(v as BSONRegExp).options}`;
    case 'Binary': return `BinData(${(v as Binary).sub_type}, ${Buffer.from((v as Binary).value()).toString('hex').toUpperCase()})`;
    case 'MinKey': return 'MinKey';
    case 'MaxKey': return 'MaxKey';
    default: return String(v);
  }
}

function doubleToString(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (Number.isInteger(x)) return Object.is(x, -0) ? '-0.0' : `${x}.0`;
  return String(x);
}

// `name: value`, as an element prints with its field name.
export function elementToString(name: string, v: unknown): string {
  return `${name}: ${valueToString(v)}`;
}

// The `{_id: 1}` (or `no id`) that several modifiers quote to identify the document.
export function idElementString(doc: unknown): string {
  if (isPlainObject(doc) && doc._id !== undefined) return elementToString('_id', doc._id);
  return 'no id';
}
