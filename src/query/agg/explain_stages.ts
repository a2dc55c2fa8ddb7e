import type { Doc } from '../../bson/values.js';
import { explainGraphLookup } from './stage_graph_lookup.js';

// The stages after the collection read, as explain shows them: as given, but for the stages
// MongoDB's optimizer rewrites in a way explain makes visible ($graphLookup absorbing the $unwind
// of its output).
export function explainStages(stages: Doc[]): Doc[] {
  const out: Doc[] = [];
  for (let i = 0; i < stages.length; i++) {
    const stage = stages[i]!;
    if (!('$graphLookup' in stage)) {
      out.push(stage);
      continue;
    }
    const { explained, absorbed } = explainGraphLookup(stage, stages[i + 1]);
    out.push(explained);
    if (absorbed) i += 1;
  }
  return out;
}
