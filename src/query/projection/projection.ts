import type { Doc } from '../../bson/values.js';
import type { MatchDetails } from '../match/matcher.js';
import { applyElemMatchFields, applyExclusion, applyInclusion, applyPositional, applySlice } from './projection_executor.js';
import { parseProjection } from './projection_parser.js';

export interface Projector {
  apply(doc: Doc, details?: MatchDetails): Doc;
  readonly isInclusion: boolean;
}

export interface ProjectionOptions {
  // The query filter: positional projections are checked against it, as MongoDB does.
  filter?: Doc;
}

// Compiles a find() projection (MongoDB 4.4+ rules). The result never shares mutable state with
// the input document. A positional `.$` reads `details.elemMatchKey` from the query's match.
export function compileProjection(spec: Doc, options: ProjectionOptions = {}): Projector {
  const parsed = parseProjection(spec, options.filter);
  return {
    isInclusion: parsed.isInclusion,
    apply(doc, details) {
      let out: Doc;
      if (parsed.isInclusion) {
        out = applyInclusion(parsed.root, doc, doc);
      } else {
        out = applyExclusion(parsed.root, doc);
        applyElemMatchFields(parsed.root, out, doc);
      }
      if (parsed.positional !== undefined) applyPositional(out, parsed.positional, details?.elemMatchKey);
      for (const slice of parsed.slices) applySlice(out, slice.path, 0, slice.skip, slice.limit);
      return out;
    },
  };
}
