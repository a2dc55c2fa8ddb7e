import { bsonTag, toDouble } from '../../bson/values.js';

// A short rendering of a value for error messages, close to how MongoDB prints a BSON element.
export function describeValue(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || bsonTag(v) === 'Double' || bsonTag(v) === 'Int32') {
    const d = toDouble(v);
    return Number.isInteger(d) && bsonTag(v) === 'Double' ? `${d}.0` : String(d);
  }
  if (Array.isArray(v)) return `[ ${v.map(describeValue).join(', ')} ]`;
  const tag = bsonTag(v);
  if (tag === 'Long') return `${String(v)}`;
  if (tag !== undefined || v instanceof Date) return String(v);
  const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${describeValue(x)}`);
  return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
}
