import { Double, Long } from 'bson';
import type { Doc } from '../../bson/values.js';
import type { IndexAccess } from '../../storage/index_access.js';
import type { QueryPlan } from '../plan/query_planner.js';
import type { MetaName, ResultMetadata } from '../projection/projection_ast.js';
import { sortKey, type SortField } from '../sort.js';
import type { Candidate } from './plan_executor.js';

// What a plan knows of each result beyond the document (MongoDB's WorkingSetMember metadata), for
// returnKey, showRecordId and $meta projections. Only the names asked for are worked out.
export function resultMetadata(c: Candidate, plan: QueryPlan, names: ReadonlySet<MetaName>, sort: readonly SortField[]): ResultMetadata {
  const meta: ResultMetadata = {};
  if (names.has('indexKey')) meta.indexKey = indexKeyOf(c, plan);
  if (names.has('recordId')) meta.recordId = Long.fromNumber(c.recordId);
  const score = c.textScore === undefined ? undefined : new Double(c.textScore);
  if (names.has('sortKey')) meta.sortKey = sort.map((f) => (f.meta === undefined ? sortKey(c.doc, f.path, f.direction) : score));
  if (names.has('textScore')) meta.textScore = score;
  if (names.has('geoNearDistance') && c.geoDistance !== undefined) meta.geoNearDistance = new Double(c.geoDistance);
  if (names.has('geoNearPoint')) meta.geoNearPoint = c.geoPoint;
  return meta;
}

// The key the plan found the document under, as {field: value} in key pattern order; a
// collection scan has none.
function indexKeyOf(c: Candidate, plan: QueryPlan): Doc | undefined {
  if (plan.kind === 'IDHACK') return { _id: c.doc._id };
  if (plan.kind !== 'IXSCAN' || c.keyString === undefined) return undefined;
  return keyDocument(plan.index, c.doc, c.keyString);
}

// The index stores key strings only, so the values come from the document's keys again: the one
// whose key string is the scanned one (a multikey document has several).
function keyDocument(index: IndexAccess, doc: Doc, keyString: Buffer): Doc | undefined {
  const { keys, values } = index.keysFor(doc);
  const at = keys.findIndex((k) => k.equals(keyString));
  if (at === -1) return undefined;
  const out: Doc = {};
  Object.keys(index.keyPattern).forEach((field, i) => { out[field] = values[at]![i]; });
  return out;
}
