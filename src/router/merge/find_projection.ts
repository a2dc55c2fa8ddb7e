import type { Doc } from '../../bson/values.js';
import { compileFilter, type MatchDetails } from '../../query/match/matcher.js';
import type { PathNode } from '../../query/projection/projection_ast.js';
import { compileProjection } from '../../query/projection/projection.js';
import { parseProjection } from '../../query/projection/projection_parser.js';
import { parseSortSpec } from '../../query/sort.js';

// A sorted find whose projection changes a sort field cannot be merged from projected shard
// results. MongoDB has each shard return a `$sortKey`; our shards cannot, so instead the shards
// keep every top-level field the sort reads (whole, so sort keys over arrays stay exact) and the
// router applies the client's projection after the merge:
//   - the projection leaves those fields untouched: shards project, the router does nothing;
//   - plain inclusion/exclusion (booleans only): shards get the projection with the sort fields
//     kept, the router re-applies the client's (projecting twice equals projecting once);
//   - computed fields, $slice, $elemMatch, positional: shards get no projection at all, since
//     an expression may read fields the narrowed document would lack.

export interface FindProjectionPlan {
  // What the shards apply; undefined sends no projection.
  shard: Doc | undefined;
  // What the router applies to each merged document; undefined when the shards already did.
  router: ((doc: Doc) => Doc) | undefined;
}

export function planFindProjection(projection: Doc | undefined, sort: Doc | undefined, filter: Doc): FindProjectionPlan {
  if (projection === undefined || Object.keys(projection).length === 0 || sort === undefined) return { shard: projection, router: undefined };
  const parsed = parseProjection(projection, filter);
  const sortFields = new Set(parseSortSpec(sort).map((f) => f.path[0]!));
  const keepsWhole = (field: string): boolean => {
    const node = parsed.root.children.get(field);
    return parsed.isInclusion ? node?.kind === 'boolean' && node.include : node === undefined;
  };
  if ([...sortFields].every(keepsWhole)) return { shard: projection, router: undefined };
  const router = routerProjection(projection, filter, parsed.positional !== undefined);
  if (!isBooleanTree(parsed.root)) return { shard: undefined, router };
  const shard: Doc = {};
  for (const key of Object.keys(projection)) {
    if (!sortFields.has(key.split('.')[0]!)) shard[key] = projection[key];
  }
  if (parsed.isInclusion) for (const field of sortFields) shard[field] = 1;
  return { shard, router };
}

function isBooleanTree(node: PathNode): boolean {
  for (const child of node.children.values()) {
    if (child.kind === 'path' ? !isBooleanTree(child) : child.kind !== 'boolean') return false;
  }
  return true;
}

function routerProjection(spec: Doc, filter: Doc, positional: boolean): (doc: Doc) => Doc {
  const projector = compileProjection(spec, { filter });
  if (!positional) return (doc) => projector.apply(doc);
  // A positional projection needs the array position the filter matched; the shards sent the
  // whole document, so the router matches it again.
  const matcher = compileFilter(filter);
  return (doc) => {
    const details: MatchDetails = {};
    matcher.matches(doc, details);
    return projector.apply(doc, details);
  };
}
