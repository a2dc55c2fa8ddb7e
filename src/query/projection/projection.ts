import type { Doc } from '../../bson/values.js';
import type { MatchDetails } from '../match/matcher.js';
import type { MetaName, ResultMetadata } from './projection_ast.js';
import { applyElemMatchFields, applyExclusion, applyInclusion, applyMetaFields, applyPositional, applySlice } from './projection_executor.js';
import { parseProjection } from './projection_parser.js';

export interface Projector {
  apply(doc: Doc, details?: MatchDetails, meta?: ResultMetadata): Doc;
  readonly isInclusion: boolean;
  // The $meta values its fields show, which the plan must then provide.
  readonly metas: ReadonlySet<MetaName>;
  // returnKey's result: the index key, with the projection's sortKey fields; MongoDB ignores
  // everything else a projection says under returnKey.
  keyOnly(meta: ResultMetadata): Doc;
}

export interface ProjectionOptions {
  // The query filter: positional projections are checked against it, as MongoDB does.
  filter?: Doc;
}

const NO_METADATA: ResultMetadata = {};
const SORT_KEY_ONLY: ReadonlySet<MetaName> = new Set(['sortKey']);

// Compiles a find() projection (MongoDB 4.4+ rules). The result never shares mutable state with
// the input document. A positional `.$` reads `details.elemMatchKey` from the query's match.
export function compileProjection(spec: Doc, options: ProjectionOptions = {}): Projector {
  const parsed = parseProjection(spec, options.filter);
  return {
    isInclusion: parsed.isInclusion,
    metas: parsed.metas,
    apply(doc, details, meta = NO_METADATA) {
      let out: Doc;
      if (parsed.isInclusion) {
        out = applyInclusion(parsed.root, doc, doc, meta);
      } else {
        out = applyExclusion(parsed.root, doc);
        applyElemMatchFields(parsed.root, out, doc);
        applyMetaFields(parsed.root, out, meta, parsed.metas);
      }
      if (parsed.positional !== undefined) applyPositional(out, parsed.positional, details?.elemMatchKey);
      for (const slice of parsed.slices) applySlice(out, slice.path, 0, slice.skip, slice.limit);
      return out;
    },
    keyOnly(meta) {
      const out: Doc = { ...meta.indexKey };
      applyMetaFields(parsed.root, out, meta, SORT_KEY_ONLY);
      return out;
    },
  };
}
