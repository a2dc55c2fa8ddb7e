import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { fail } from './operator_support.js';
import { parseBucket, parseBucketAuto, parseSortByCount } from './stage_bucket.js';
import { parseMatch, parseRedact } from './stage_filter.js';
import { parseGraphLookup } from './stage_graph_lookup.js';
import { parseGroup } from './stage_group.js';
import { parseFacet, parseLookup, parseUnionWith } from './stage_lookup.js';
import { parseCount, parseLimit, parseSample, parseSkip, parseSort } from './stage_paging.js';
import { parseAddFieldsStage, parseProject, parseReplaceRoot, parseUnset } from './stage_shape.js';
import { parseCollStats, parseDocuments, parseGeoNear } from './stage_source.js';
import type { CompiledPipeline, PipelineContext, Stage, StageEnv, StageParser, SubPipelineKind } from './stage_support.js';
import { parseUnwind } from './stage_unwind.js';
import { checkForInterrupt } from '../../base/operation_deadline.js';
import { extractText } from '../exec/text_query.js';

export type { PipelineContext } from './stage_support.js';

const stages: Record<string, StageParser> = {
  $match: parseMatch,
  $project: parseProject,
  $addFields: parseAddFieldsStage,
  $set: parseAddFieldsStage,
  $unset: parseUnset,
  $replaceRoot: parseReplaceRoot,
  $replaceWith: parseReplaceRoot,
  $group: parseGroup,
  $sort: parseSort,
  $limit: parseLimit,
  $skip: parseSkip,
  $count: parseCount,
  $sample: parseSample,
  $unwind: parseUnwind,
  $lookup: parseLookup,
  $graphLookup: parseGraphLookup,
  $unionWith: parseUnionWith,
  $facet: parseFacet,
  $bucket: parseBucket,
  $bucketAuto: parseBucketAuto,
  $sortByCount: parseSortByCount,
  $redact: parseRedact,
  $documents: parseDocuments,
  $collStats: parseCollStats,
  $geoNear: parseGeoNear,
};

// Written by the command layer, which runs everything before them through runPipeline.
const FINAL_ONLY = new Set(['$out', '$merge']);
const FIRST_ONLY = new Set(['$documents', '$collStats']);
const NOT_IN_FACET = new Set(['$collStats', '$facet', '$out', '$merge', '$documents']);

function stageName(stage: unknown): string {
  if (!isPlainObject(stage)) fail(ErrorCodes.TypeMismatch, "Each element of the 'pipeline' array must be an object");
  const keys = Object.keys(stage);
  if (keys.length !== 1) fail(40323, 'A pipeline stage specification object must contain exactly one field.');
  const name = keys[0]!;
  // Change streams read a replica set's oplog, which docshard's nodes do not keep: answered as a
  // standalone mongod answers them.
  if (name === '$changeStream') fail(40573, 'The $changeStream stage is only supported on replica sets');
  if (!Object.prototype.hasOwnProperty.call(stages, name) && !FINAL_ONLY.has(name)) {
    fail(40324, `Unrecognized pipeline stage name: '${name}'`);
  }
  return name;
}

function validate(pipeline: unknown, kind: SubPipelineKind | undefined): asserts pipeline is Doc[] {
  if (!Array.isArray(pipeline)) fail(ErrorCodes.TypeMismatch, "'pipeline' option must be specified as an array");
  pipeline.forEach((stage, i) => {
    const name = stageName(stage);
    if (FINAL_ONLY.has(name)) {
      if (kind === 'lookup') fail(51047, `${name} is not allowed within a $lookup's sub-pipeline`);
      if (kind === 'facet') fail(40600, `${name} is not allowed to be used within a $facet stage`);
      if (kind === 'unionWith') fail(31441, `${name} is not allowed within a $unionWith's sub-pipeline`);
      if (i !== pipeline.length - 1) fail(40601, `${name} can only be the final stage in the pipeline`);
    }
    if (kind === 'facet' && NOT_IN_FACET.has(name)) fail(40600, `${name} is not allowed to be used within a $facet stage`);
    if (FIRST_ONLY.has(name) && i !== 0) fail(40602, `${name} is only valid as the first stage in a pipeline`);
    if (name === '$geoNear' && (i !== 0 || kind !== undefined)) fail(40603, '$geoNear was not the first stage in the pipeline.');
    if (name === '$match' && (i !== 0 || kind !== undefined) && isPlainObject(stage.$match) && extractText(stage.$match) !== undefined) {
      fail(17313, '$match with $text is only allowed as the first pipeline stage');
    }
  });
}

export function validatePipeline(pipeline: unknown): asserts pipeline is Doc[] {
  validate(pipeline, undefined);
}

// A pipeline that ends in $out or $merge writes, which a linearizable read concern cannot cover:
// MongoDB refuses the pair (the write stages' read concern support) before anything runs.
export function checkWriteStageReadConcern(pipeline: Doc[], readConcern: unknown): void {
  if (!isPlainObject(readConcern) || readConcern.level !== 'linearizable') return;
  const last = pipeline[pipeline.length - 1];
  const name = last === undefined ? '' : stageName(last);
  if (name === '$out' || name === '$merge') fail(ErrorCodes.InvalidOptions, `${name} cannot be used with a 'linearizable' read concern level`);
}

function compile(pipeline: unknown, ctx: PipelineContext, varNames: string[], kind: SubPipelineKind | undefined): CompiledPipeline {
  validate(pipeline, kind);
  const env: StageEnv = {
    ctx,
    varNames,
    compilePipeline: (sub, names, subKind) => compile(sub, ctx, names, subKind),
  };
  const compiled: Stage[] = pipeline.map((stage) => {
    const name = Object.keys(stage)[0]!;
    const parser = stages[name];
    if (parser === undefined) throw new MongoError(ErrorCodes.NotImplemented, `${name} must be executed by the command layer`);
    return parser(stage[name], env, name);
  });
  return (input, vars) => compiled.reduce((docs, stage) => interruptible(stage(docs, vars)), input);
}

// Every document a stage passes on is a point where the operation may have run out of time: a
// stage that multiplies its input ($lookup, $unwind) is checked as often as one that reads it.
function* interruptible(docs: Iterable<Doc>): Iterable<Doc> {
  for (const doc of docs) {
    checkForInterrupt();
    yield doc;
  }
}

// Parses every stage up front, so a bad pipeline fails before any document is read; the result
// streams through the stages that allow it and buffers only where a stage must ($sort, $group).
export function runPipeline(pipeline: Doc[], input: Iterable<Doc>, ctx: PipelineContext): Iterable<Doc> {
  const run = compile(pipeline, ctx, Object.keys(ctx.variables ?? {}), undefined);
  const vars = { ...ctx.variables, ...(ctx.now === undefined ? {} : { NOW: ctx.now }) };
  return { [Symbol.iterator]: () => run(input, vars)[Symbol.iterator]() };
}
