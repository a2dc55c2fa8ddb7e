import { letVariables } from '../../command_layer/let_variables.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { deserializeDocument, isPlainObject, type Doc } from '../../bson/values.js';
import { collated, withCollation, type StringComparator } from '../../bson/collation.js';
import { checkWriteStageReadConcern, runPipeline, validatePipeline, type PipelineContext } from '../../query/agg/pipeline.js';
import { outputStageOf } from '../../query/agg/stage_output.js';
import { isTextScoreStage, rewriteTextScore, startsWithText, TEXT_SCORE_FIELD } from '../../query/agg/text_score.js';
import { prepareFind, type FindSpec } from '../../query/exec/find_query.js';
import { parseGeoNearStage } from '../../query/geo/geo_near_stage.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import type { CommandContext, CommandDefinition } from '../command.js';
import { optionalBool, optionalDoc, optionalNonNegative, requireArray } from '../../command_layer/args.js';
import { cursorReply } from '../../command_layer/cursor_manager.js';
import { collectionStatsDoc } from '../ddl/coll_stats.js';
import { writeOutStage } from './out_stage.js';
import { routedRead } from './orphan_filter.js';
import { resolveView } from '../views/view_catalog.js';
import { currentOperations } from '../diagnostic/current_op.js';
import { checkCurrentOpStage } from '../../command_layer/current_op_stage.js';
import { commandCollation } from './collection_collation.js';
import { checkForInterrupt } from '../../base/operation_deadline.js';
import { mentionsChangeStream } from '../../change_streams/change_stream_spec.js';
import { runChangeStream } from './change_stream_aggregate.js';
import { isChangeStreamPipeline } from '../../change_streams/change_stream_spec.js';

export interface ParsedAggregate {
  ns: string;
  coll: string | undefined;
  pipeline: Doc[];
  batchSize: number | undefined;
  variables: Doc | undefined;
  explain: boolean;
  collation: StringComparator | undefined;
  // The index the collection read must use, as find's hint.
  hint: unknown;
  keep?: (doc: Doc) => boolean;
}

export function parseAggregate(ctx: CommandContext, cmd: Doc): ParsedAggregate {
  const target = cmd.aggregate;
  let coll: string | undefined;
  if (typeof target === 'string') coll = target;
  else if (target !== 1 && !(typeof target === 'object' && target !== null && Number(target) === 1)) {
    throw new MongoError(ErrorCodes.FailedToParse, "Invalid command format: the 'aggregate' field must specify a collection name or 1");
  }
  const raw: unknown[] = requireArray(cmd, 'pipeline');
  const expanded: unknown = expandNodeSources(ctx, cmd, raw);
  validatePipeline(expanded);
  const pipeline = rewriteTextScore(expanded);
  checkWriteStageReadConcern(pipeline, cmd.readConcern);
  const explain = optionalBool(cmd, 'explain') ?? false;
  const cursor = optionalDoc(cmd, 'cursor');
  if (!cursor && !explain) {
    throw new MongoError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument");
  }
  const batchSize = cursor ? optionalNonNegative(cursor, 'batchSize') : undefined;
  const ns = coll === undefined ? `${ctx.db}.$cmd.aggregate` : `${ctx.db}.${coll}`;
  const hint = cmd.hint;
  if (hint !== undefined && typeof hint !== 'string' && !isPlainObject(hint)) {
    throw new MongoError(ErrorCodes.FailedToParse, 'hint must be either a string or nested object');
  }
  return { ns, coll, pipeline, batchSize, variables: letVariables(cmd), explain, collation: commandCollation(ctx.node.storage, ns, cmd.collation), hint };
}

// $listLocalSessions and $currentOp read the node's own state (its session cache, the operations
// it knows of), which the pure pipeline cannot see: each is replaced by the documents it would
// produce.
function expandNodeSources(ctx: CommandContext, cmd: Doc, raw: unknown[]): unknown[] {
  const first = raw[0];
  if (!isPlainObject(first)) return raw;
  if ('$listLocalSessions' in first) return [{ $documents: ctx.node.sessions.list() }, ...raw.slice(1)];
  if ('$currentOp' in first) {
    checkCurrentOpStage(ctx.db, cmd, first.$currentOp);
    return [{ $documents: { $literal: currentOperations(ctx.node) } }, ...raw.slice(1)];
  }
  return raw;
}

// Leading $match / $sort stages become the query of the collection read, so they can use indexes.
export function splitPushdown(pipeline: Doc[]): { find: FindSpec; rest: Doc[] } {
  const find: FindSpec = { filter: {}, javascript: false };
  let i = 0;
  if (pipeline[0] !== undefined && '$geoNear' in pipeline[0]) {
    find.geoNear = parseGeoNearStage(pipeline[0].$geoNear);
    return { find, rest: pipeline.slice(1) };
  }
  if (startsWithText(pipeline)) {
    // The text score is the find's projection; a $sort after it sorts by that projected field,
    // so it stays in the pipeline.
    find.filter = pipeline[0]!.$match as Doc;
    if (!isTextScoreStage(pipeline[1])) return { find, rest: pipeline.slice(1) };
    find.projection = { [TEXT_SCORE_FIELD]: { $meta: 'textScore' } };
    return { find, rest: pipeline.slice(2) };
  }
  if (pipeline[i] && isPlainObject(pipeline[i]!.$match)) {
    find.filter = pipeline[i]!.$match as Doc;
    i += 1;
  }
  if (pipeline[i] && isPlainObject(pipeline[i]!.$sort)) {
    find.sort = pipeline[i]!.$sort as Doc;
    i += 1;
  }
  return { find, rest: pipeline.slice(i) };
}

// `now`: the operation's $$NOW and the localTime its $collStats reports.
export function pipelineContext(storage: StorageEngine, db: string, collection: string | undefined, variables: Doc | undefined, now: Date): PipelineContext {
  const ctx: PipelineContext = {
    db,
    collection,
    variables,
    now,
    // $lookup and $unionWith read a view as its pipeline over the collection under it.
    readCollection: (name: string) => {
      const view = resolveView(storage, `${db}.${name}`);
      if (view === undefined) return readAll(storage, storage.getCollection(`${db}.${name}`));
      return runPipeline(view.pipeline, readAll(storage, storage.getCollection(view.ns)), ctx);
    },
    collStats: (name: string, spec: Doc) => collectionStatsDoc(storage, `${db}.${name}`, spec, now),
  };
  return ctx;
}

function* readAll(storage: StorageEngine, coll: Collection | undefined): Iterable<Doc> {
  if (!coll) return;
  for (const { bytes } of storage.scanRecords(coll)) {
    checkForInterrupt();
    yield deserializeDocument(bytes);
  }
}

export function runAggregateInput(storage: StorageEngine, parsed: ParsedAggregate, now: Date): Iterable<Doc> {
  const { pipeline } = parsed;
  const ctx = pipelineContext(storage, parsed.ns.split('.')[0]!, parsed.coll, parsed.variables, now);
  if (parsed.coll === undefined || (pipeline[0] && ('$collStats' in pipeline[0] || '$documents' in pipeline[0]))) {
    return collated(parsed.collation, withCollation(parsed.collation, () => runPipeline(pipeline, [], ctx)));
  }
  const { find, rest } = splitPushdown(pipeline);
  find.variables = parsed.variables;
  find.collation = parsed.collation;
  find.keep = parsed.keep;
  find.hint = parsed.hint;
  const prepared = prepareFind(storage, storage.getCollection(parsed.ns), find);
  return collated(parsed.collation, withCollation(parsed.collation, () => runPipeline(rest, mapDocs(prepared.results), ctx)));
}

function* mapDocs(results: Iterable<{ doc: Doc }>): Iterable<Doc> {
  for (const r of results) yield r.doc;
}

export const aggregateCommand: CommandDefinition = {
  names: ['aggregate'],
  run: (ctx, cmd) => {
    // A standalone node keeps no oplog: its pipeline check answers 40573, as a standalone mongod.
    const replication = ctx.node.replication;
    if (replication === undefined || !mentionsChangeStream(cmd.pipeline)) return runAggregate(ctx, cmd);
    if (!isChangeStreamPipeline(cmd.pipeline)) throw new MongoError(40602, '$changeStream is only valid as the first stage in a pipeline');
    return runChangeStream(ctx, cmd, replication);
  },
};

// `asView`: the aggregate stands for a read of a view, whose namespace its cursor carries (and a
// find's singleBatch) instead of the aggregated collection's.
export function runAggregate(ctx: CommandContext, cmd: Doc, asView?: { ns: string; singleBatch: boolean }): Doc {
  const parsed = { ...parseAggregate(ctx, cmd) };
  const read = routedRead(ctx, cmd, parsed.ns);
  parsed.keep = read.keep;
  const cursorNs = asView?.ns ?? parsed.ns;
  const { storage, cursors } = ctx.node;
  const output = outputStageOf(parsed.pipeline, ctx.db);
  if (output) {
    const inner = { ...parsed, pipeline: parsed.pipeline.slice(0, -1) };
    writeOutStage(storage, output, runAggregateInput(storage, inner, new Date(ctx.node.wallClock.now())));
    return cursorReply(cursorNs, { docs: [], cursorId: cursors.firstBatch(cursorNs, [], 0).cursorId }, 'firstBatch');
  }
  const docs = runAggregateInput(storage, parsed, new Date(ctx.node.wallClock.now()));
  const batch = cursors.firstBatch(cursorNs, read.track(wrap(docs)), parsed.batchSize, asView?.singleBatch);
  return cursorReply(cursorNs, batch, 'firstBatch');
}

function* wrap(docs: Iterable<Doc>): Iterable<{ doc: Doc }> {
  for (const doc of docs) yield { doc };
}
