import type { StringComparator } from '../../bson/collation.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { planFindProjection, type FindProjectionPlan } from './find_projection.js';
import { applySkipLimit, mergeBySortKey, mergeByWholeSortKey, mergeSorted } from './stream_merge.js';
import { extractNear } from '../../query/geo/near_query.js';

// How the router splits a find across shards and merges the answers (MongoDB's cluster_find):
// every shard runs the same filter and sort; skip can only be applied to the merged stream, so
// each shard must return up to skip+limit documents.

export interface FindMergePlan {
  shardCommand: Doc;
  sort: Doc | undefined;
  skip: number;
  // 0 means no limit.
  limit: number;
  projection: FindProjectionPlan;
  // The shards add each result's sort key as `$sortKey`: the merge compares those, and removes them.
  bySortKey: boolean;
  // An unsorted $near: the shards add each result's distance as `$sortKey`, and the merge takes
  // the nearest first, as mongos merges them.
  byDistance?: boolean;
}

export function planFindMerge(find: Doc): FindMergePlan {
  const sort = docArg(find.sort);
  const skip = numberArg(find.skip);
  const limit = numberArg(find.limit);
  const shardCommand: Doc = { ...find };
  delete shardCommand.skip;
  if (limit > 0) shardCommand.limit = limit + skip;
  if (sort === undefined && isPlainObject(find.filter) && extractNear(find.filter) !== undefined) {
    shardCommand.projection = { ...docArg(find.projection), $sortKey: { $meta: 'geoNearDistance' } };
    return { shardCommand, sort, skip, limit, projection: { shard: shardCommand.projection as Doc, router: undefined }, bySortKey: false, byDistance: true };
  }
  if (showsPlanMetadata(find) || sortsByMeta(sort)) {
    // Only each shard's plan knows the index key, the record id or the sort key these show, so the
    // shards apply the projection whole, and a sorted merge reads the sort key each shard adds (as
    // mongos asks its shards for one).
    if (sort !== undefined) shardCommand.projection = { ...docArg(find.projection), $sortKey: { $meta: 'sortKey' } };
    return { shardCommand, sort, skip, limit, projection: { shard: docArg(shardCommand.projection), router: undefined }, bySortKey: sort !== undefined };
  }
  const projection = planFindProjection(docArg(find.projection), sort, docArg(find.filter) ?? {});
  if (projection.shard === undefined) delete shardCommand.projection;
  else shardCommand.projection = projection.shard;
  return { shardCommand, sort, skip, limit, projection, bySortKey: false };
}

// A sort by {$meta: 'textScore'}: only the shards know the scores, so they send them as sort keys.
function sortsByMeta(sort: Doc | undefined): boolean {
  return sort !== undefined && Object.values(sort).some(isPlainObject);
}

// returnKey, showRecordId or a {$meta: ...} anywhere in the projection.
function showsPlanMetadata(find: Doc): boolean {
  return isTrue(find.returnKey) || isTrue(find.showRecordId) || hasMeta(find.projection);
}

function isTrue(v: unknown): boolean {
  return v === true || (isNumber(v) && toDouble(v) !== 0);
}

function hasMeta(projection: unknown): boolean {
  if (!isPlainObject(projection)) return false;
  return Object.entries(projection).some(([k, v]) => k === '$meta' || hasMeta(v));
}

// The client's result: shard streams (each the answer to `plan.shardCommand`) merged, skipped,
// limited and, where the shards could not, projected.
export async function* mergeFindResults(plan: FindMergePlan, streams: AsyncIterable<Doc>[], collation?: StringComparator): AsyncIterable<Doc> {
  if (plan.bySortKey || plan.byDistance === true) {
    const merged = plan.bySortKey ? mergeBySortKey(streams, plan.sort!, collation) : mergeByWholeSortKey(streams);
    for await (const doc of applySkipLimit(merged, plan.skip, plan.limit)) {
      delete doc.$sortKey;
      yield doc;
    }
    return;
  }
  const merged = applySkipLimit(mergeSorted(streams, plan.sort, collation), plan.skip, plan.limit);
  const project = plan.projection.router;
  if (project === undefined) {
    yield* merged;
    return;
  }
  for await (const doc of merged) yield project(doc);
}

function docArg(v: unknown): Doc | undefined {
  return isPlainObject(v) && Object.keys(v).length > 0 ? v : undefined;
}

// The find command has validated these already; absent counts as 0.
function numberArg(v: unknown): number {
  return isNumber(v) ? Math.trunc(toDouble(v)) : 0;
}
