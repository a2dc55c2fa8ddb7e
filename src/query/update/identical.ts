import { bsonTypeName, compareValues } from '../../bson/compare.js';
import { withCollation } from '../../bson/collation.js';
import { isPlainObject, toDouble } from '../../bson/values.js';

// MongoDB's no-op detection compares BSON bytes, not values: 1 and 1.0 differ, and so do two
// documents whose fields are in a different order.
export function identical(a: unknown, b: unknown): boolean {
  const ta = bsonTypeName(a);
  if (ta !== bsonTypeName(b)) return false;
  if (Array.isArray(a)) {
    const y = b as unknown[];
    return a.length === y.length && a.every((x, i) => identical(x, y[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && identical(a[k], b[k]));
  }
  if (ta === 'double') return Object.is(toDouble(a), toDouble(b)) || (Number.isNaN(toDouble(a)) && Number.isNaN(toDouble(b)));
  // Bytes, so never under the command's collation ('pong' and 'PONG' differ even at strength 2).
  return withCollation(undefined, () => compareValues(a, b) === 0);
}
