import type { Doc, Double } from '../../bson/values.js';

// The parsed form of a find projection: a tree keyed by path component, as MongoDB's
// projection_ast. Find-only features ($slice, $elemMatch, positional `.$`) are leaves too.
export type ProjectionNode =
  | { kind: 'boolean'; include: boolean }
  | { kind: 'expression'; evaluate: (root: Doc) => unknown }
  | { kind: 'slice'; skip: number | undefined; limit: number }
  | { kind: 'elemMatch'; matches: (element: unknown) => boolean }
  | { kind: 'positional' }
  | { kind: 'meta'; name: MetaName }
  | PathNode;

// The $meta values a find projection can show: the key of the index the plan read, the record id,
// the sort key, the $text score and a $near's distance and location. They come from the plan, not the document (ResultMetadata).
export type MetaName = 'indexKey' | 'recordId' | 'sortKey' | 'textScore' | 'geoNearDistance' | 'geoNearPoint';

// What the plan knows of one result; a name the plan cannot give is left out of the result.
export interface ResultMetadata {
  indexKey?: Doc;
  recordId?: unknown;
  sortKey?: unknown[];
  // A double on the wire whatever its value, as mongod sends it.
  textScore?: Double;
  // A $near's distance to the document and the location measured to.
  geoNearDistance?: Double;
  geoNearPoint?: unknown;
}

export interface PathNode {
  kind: 'path';
  children: Map<string, ProjectionNode>;
}

export interface ParsedProjection {
  root: PathNode;
  isInclusion: boolean;
  // Full paths of the find-only leaves, applied to the projected document afterwards.
  slices: { path: string[]; skip: number | undefined; limit: number }[];
  positional: string[] | undefined;
  // The $meta values some field shows.
  metas: ReadonlySet<MetaName>;
}

export function hasComputedFields(node: PathNode): boolean {
  for (const child of node.children.values()) {
    if (child.kind === 'expression' || child.kind === 'elemMatch' || child.kind === 'meta') return true;
    if (child.kind === 'path' && hasComputedFields(child)) return true;
  }
  return false;
}
