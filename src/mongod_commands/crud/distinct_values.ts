import { isPlainObject } from '../../bson/values.js';

// The values distinct() reports for one document: arrays met along the path are traversed, and
// an array at the end of the path contributes its elements (one level), as mongod does.
export function distinctValues(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  collect(doc, path.split('.'), 0, out);
  return out;
}

function collect(value: unknown, parts: string[], i: number, out: unknown[]): void {
  if (i === parts.length) {
    if (Array.isArray(value)) out.push(...value);
    else if (value !== undefined) out.push(value);
    return;
  }
  if (Array.isArray(value)) {
    const part = parts[i]!;
    if (/^\d+$/.test(part) && Number(part) < value.length) {
      collect(value[Number(part)], parts, i + 1, out);
      return;
    }
    for (const el of value) if (isPlainObject(el)) collect(el[part], parts, i + 1, out);
    return;
  }
  if (isPlainObject(value)) collect(value[parts[i]!], parts, i + 1, out);
}
