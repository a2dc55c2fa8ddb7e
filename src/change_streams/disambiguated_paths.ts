import { isPlainObject, type Doc } from '../bson/values.js';
import type { UpdateDescription } from '../oplog/update_description.js';

// MongoDB's `disambiguatedPaths` (showExpandedEvents): each updated or removed path with a
// component that could be read two ways (a number: an array index or a field so named; a field
// name with a dot), as its list of components, array indexes as numbers. `after` is the document
// the update produced, which says which numbers were indexes.
export function disambiguatedPaths(desc: UpdateDescription, after: Doc): Doc {
  const out: Doc = {};
  const paths = [...Object.keys(desc.updatedFields), ...desc.removedFields, ...desc.truncatedArrays.map((t) => t.field)];
  for (const path of paths) {
    const parts = path.split('.');
    if (!parts.some((p) => /^\d+$/.test(p))) continue;
    let node: unknown = after;
    out[path] = parts.map((p) => {
      const index = Array.isArray(node) && /^\d+$/.test(p);
      node = index ? (node as unknown[])[Number(p)] : isPlainObject(node) ? node[p] : undefined;
      return index ? Number(p) : p;
    });
  }
  return out;
}
