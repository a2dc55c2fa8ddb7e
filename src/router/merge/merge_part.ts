import { isNumber, toDouble, type Doc } from '../../bson/values.js';
import { runPipeline, type PipelineContext } from '../../query/agg/pipeline.js';
import { MERGE_GROUP, runMergeGroup } from './group_split.js';
import { applySkipLimit } from './stream_merge.js';

// Runs a split pipeline's merge part: `$_internalMergeGroup` here, everything else through
// runPipeline. A final $out/$merge is left to the command layer, as for any pipeline.
export function runMergePart(mergePart: Doc[], input: Iterable<Doc>, ctx: PipelineContext): Iterable<Doc> {
  let out = input;
  let segment: Doc[] = [];
  const flush = (): void => {
    if (segment.length > 0) out = runPipeline(segment, out, ctx);
    segment = [];
  };
  for (const stage of mergePart) {
    if (MERGE_GROUP in stage) {
      flush();
      out = runMergeGroup(stage[MERGE_GROUP], out);
    } else {
      segment.push(stage);
    }
  }
  flush();
  return out;
}

// Stages whose output for a document depends on that document alone.
const PER_DOCUMENT = new Set(['$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$unwind', '$redact', '$lookup', '$graphLookup']);

// The merge part over the merged shard stream. Its leading per-document stages and $skip/$limit
// stream, so that a limit stops reading the shards; from the first stage that needs all its
// input on, the rest of the stream is gathered and runMergePart takes over.
export async function* runMergePartAsync(mergePart: Doc[], input: AsyncIterable<Doc>, ctx: PipelineContext): AsyncIterable<Doc> {
  let stream = input;
  let perDocument: Doc[] = [];
  let i = 0;
  for (; i < mergePart.length; i++) {
    const stage = mergePart[i]!;
    const name = Object.keys(stage)[0]!;
    if (PER_DOCUMENT.has(name)) {
      perDocument.push(stage);
      continue;
    }
    if (name !== '$skip' && name !== '$limit') break;
    stream = eachDocument(perDocument, stream, ctx);
    perDocument = [];
    const n = isNumber(stage[name]) ? toDouble(stage[name]) : 0;
    stream = name === '$skip' ? applySkipLimit(stream, n, 0) : applySkipLimit(stream, 0, n);
  }
  stream = eachDocument(perDocument, stream, ctx);
  if (i === mergePart.length) {
    yield* stream;
    return;
  }
  const rest: Doc[] = [];
  for await (const doc of stream) rest.push(doc);
  yield* runMergePart(mergePart.slice(i), rest, ctx);
}

// Compiled once; each document is pushed through alone, which per-document stages allow.
function eachDocument(stages: Doc[], input: AsyncIterable<Doc>, ctx: PipelineContext): AsyncIterable<Doc> {
  if (stages.length === 0) return input;
  let current: Doc[] = [];
  const compiled = runPipeline(stages, { [Symbol.iterator]: () => current[Symbol.iterator]() }, ctx);
  return (async function* () {
    for await (const doc of input) {
      current = [doc];
      yield* compiled;
    }
  })();
}
