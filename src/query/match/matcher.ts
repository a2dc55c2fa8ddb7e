import type { Doc } from '../../bson/values.js';
import { parseFilter, type ParseOptions } from './expression_parser.js';
import type { MatchDetails } from './match_node.js';

export type { MatchDetails } from './match_node.js';

export interface Matcher {
  matches(doc: Doc, details?: MatchDetails): boolean;
}

// Parses a query filter once (all errors surface here, as MongoDB rejects a bad filter before
// reading any document) into a reusable matcher.
export function compileFilter(filter: Doc, options: ParseOptions = {}): Matcher {
  const node = parseFilter(filter, options);
  return {
    matches(doc, details) {
      if (details !== undefined) delete details.elemMatchKey;
      return node(doc, details);
    },
  };
}
