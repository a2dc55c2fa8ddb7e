import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { runPipeline, validatePipeline } from '../../query/agg/pipeline.js';
import { splitAccumulatorGroup } from './accumulator_split.js';
import { splitGroup } from './group_split.js';

// An aggregation split into the part every shard runs and the part the router runs on the
// merged shard results (MongoDB's sharded_agg_helpers splitPipeline):
//   - the leading stages that work one document at a time run on the shards;
//   - the first stage that needs all the data is the split point: $sort runs on the shards and
//     the router merges the sorted streams (`mergeSort`), taking a directly following $limit
//     along; $limit runs on both sides; $skip on the router only; $group as a partial $group on
//     the shards and `$_internalMergeGroup` on the router (group_split.ts), or, when every field is
//     $accumulator, each shard's states merged by a $group of the primary shard
//     (accumulator_split.ts); any other stage
//     ($lookup, $graphLookup, $facet, $bucket, $sample, $out, ...) on the router only, where
//     the collections they read are read whole through the router, sharded or not;
//   - everything after the split point runs on the router;
//   - a leading $geoNear runs on the shards and the router merges by its distance field.
// Then, as MongoDB does: a $limit the router reaches through only $skip and 1:1 stages bounds
// what each shard must send (skip+limit), and a final $unwind on the shards moves to the router
// when nothing on the shards follows it, since unwinding there only multiplies the traffic.
// $count and $sortByCount are first rewritten into the $group (+$project/$sort) they stand for.

export interface PipelineSplit {
  shardsPart: Doc[];
  mergePart: Doc[];
  // When set, the router must merge the shard streams in this order.
  mergeSort?: Doc;
}

const SHARD_STREAMING = new Set(['$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$unwind', '$redact']);
const ONE_TO_ONE = new Set(['$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith']);

export function splitPipeline(pipeline: Doc[], variables?: Record<string, unknown>): PipelineSplit {
  validate(pipeline, variables);
  const stages = pipeline.flatMap(desugar);
  if (stages[0] !== undefined && nameOf(stages[0]) === '$geoNear') return splitGeoNear(stages);
  const shardsPart: Doc[] = [];
  let i = 0;
  while (i < stages.length && SHARD_STREAMING.has(nameOf(stages[i]!))) shardsPart.push(stages[i++]!);
  if (i === stages.length) return { shardsPart, mergePart: [] };
  const stage = stages[i]!;
  const rest = stages.slice(i + 1);
  const split = splitAt(stage, rest, shardsPart);
  propagateLimitToShards(split);
  moveFinalUnwindToMerger(split);
  return split;
}

// $geoNear runs on the shards, each handing out its documents nearest first with their distance
// at distanceField; the router merges by that field, as mongos merges $geoNear by distance.
function splitGeoNear(stages: Doc[]): PipelineSplit {
  const distanceField = (stages[0]!.$geoNear as Doc).distanceField as string;
  const split: PipelineSplit = { shardsPart: [stages[0]!], mergePart: stages.slice(1), mergeSort: { [distanceField]: 1 } };
  propagateLimitToShards(split);
  return split;
}

// Rejects what runPipeline would reject, before anything is sent: the shards would answer with
// the same error, but only after the rewrites below had changed the stages it names.
function validate(pipeline: Doc[], variables: Record<string, unknown> | undefined): void {
  validatePipeline(pipeline);
  const last = pipeline[pipeline.length - 1];
  const body = last !== undefined && ('$out' in last || '$merge' in last) ? pipeline.slice(0, -1) : pipeline;
  runPipeline(body, [], { db: '', readCollection: () => [], variables });
}

function nameOf(stage: Doc): string {
  return Object.keys(stage)[0]!;
}

function desugar(stage: Doc): Doc[] {
  const name = nameOf(stage);
  if (name === '$count') {
    const field = stage.$count as string;
    return [{ $group: { _id: null, [field]: { $sum: 1 } } }, { $project: { _id: 0, [field]: 1 } }];
  }
  if (name === '$sortByCount') {
    return [{ $group: { _id: stage.$sortByCount, count: { $sum: 1 } } }, { $sort: { count: -1 } }];
  }
  return [stage];
}

function splitAt(stage: Doc, rest: Doc[], shardsPart: Doc[]): PipelineSplit {
  switch (nameOf(stage)) {
    case '$sort': {
      const sort = stage.$sort as Doc;
      // A $meta sort (randVal) has no key the router could merge by. A textScore sort has become
      // a sort by the score field before the split (query/agg/text_score.ts).
      if (Object.values(sort).some(isPlainObject)) break;
      shardsPart.push(stage);
      const next = rest[0];
      if (next !== undefined && nameOf(next) === '$limit') shardsPart.push(next);
      return { shardsPart, mergePart: rest, mergeSort: sort };
    }
    case '$limit':
      shardsPart.push(stage);
      return { shardsPart, mergePart: [stage, ...rest] };
    case '$group': {
      const group = splitGroup(stage.$group as Doc) ?? splitAccumulatorGroup(stage.$group as Doc);
      if (group === undefined) break;
      shardsPart.push(group.shards);
      return { shardsPart, mergePart: [group.merge, ...rest] };
    }
    default:
      break;
  }
  return { shardsPart, mergePart: [stage, ...rest] };
}

// Only while each shard document is one router input document: never after a partial $group.
function propagateLimitToShards(split: PipelineSplit): void {
  const lastShard = split.shardsPart[split.shardsPart.length - 1];
  if (lastShard !== undefined && nameOf(lastShard) === '$group') return;
  let skipped = 0;
  for (const stage of split.mergePart) {
    const name = nameOf(stage);
    if (name === '$skip') skipped += count(stage.$skip);
    else if (name === '$limit') {
      const limit = skipped + count(stage.$limit);
      const already = lastShard !== undefined && nameOf(lastShard) === '$limit' && count(lastShard.$limit) <= limit;
      if (!already) split.shardsPart.push({ $limit: limit });
      return;
    } else if (!ONE_TO_ONE.has(name)) return;
  }
}

function moveFinalUnwindToMerger(split: PipelineSplit): void {
  for (let last = split.shardsPart.at(-1); last !== undefined && nameOf(last) === '$unwind'; last = split.shardsPart.at(-1)) {
    split.mergePart.unshift(split.shardsPart.pop()!);
  }
}

function count(v: unknown): number {
  return isNumber(v) ? toDouble(v) : 0;
}
