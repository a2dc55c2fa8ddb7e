import type { Binary, Long, ObjectId, Timestamp, BSONRegExp, Double, Decimal128 } from 'bson';
import { bsonTag, isPlainObject } from './values.js';

// Renders a value the way mongod prints one in error messages ({ _id: "a" }, ObjectId('...')).
export function formatValue(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (Array.isArray(v)) return `[ ${v.map(formatValue).join(', ')} ]`;
  if (isPlainObject(v)) {
    const fields = Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${k}: ${formatValue(x)}`);
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
  }
  switch (bsonTag(v)) {
    case 'ObjectId': return `ObjectId('${(v as ObjectId).toHexString()}')`;
    case 'Long': return (v as Long).toString();
    case 'Double': return String((v as Double).value);
    case 'Decimal128': return `NumberDecimal("${(v as Decimal128).toString()}")`;
    case 'Timestamp': return `Timestamp(${(v as Timestamp).high}, ${(v as Timestamp).low})`;
    case 'BSONRegExp': return `/${(v as BSONRegExp).pattern}/${(v as BSONRegExp).options}`;
    case 'Binary': return `BinData(${(v as Binary).sub_type}, ${Buffer.from((v as Binary).value()).toString('hex').toUpperCase()})`;
    case 'MinKey': return 'MinKey';
    case 'MaxKey': return 'MaxKey';
    default: return String(v);
  }
}
