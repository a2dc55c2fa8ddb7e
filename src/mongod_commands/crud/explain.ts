import os from 'node:os';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { prepareFind, type FindSpec, type PreparedFind } from '../../query/exec/find_query.js';
import type { QueryPlan, TextSearchPlan } from '../../query/plan/query_planner.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, commandName } from '../../command_layer/args.js';
import { SERVER_VERSION } from '../../command_layer/server_description.js';
import { parseFind } from './find.js';
import { parseAggregate, splitPushdown } from './aggregate.js';
import { explainStages } from '../../query/agg/explain_stages.js';
import { commandCollation } from './collection_collation.js';

// What each explainable command reads, as a find: explain runs that read and reports the plan,
// without performing any write.
function findSpecOf(inner: Doc, db: string): { ns: string; spec: FindSpec } {
  const name = commandName(inner);
  const ns = `${db}.${collectionArg(inner)}`;
  switch (name) {
    case 'find': return { ns, spec: parseFind(inner) };
    case 'count': return { ns, spec: { filter: (inner.query as Doc) ?? {}, hint: inner.hint } };
    case 'distinct': return { ns, spec: { filter: (inner.query as Doc) ?? {}, hint: inner.hint } };
    case 'findAndModify': case 'findandmodify': return { ns, spec: { filter: (inner.query as Doc) ?? {}, sort: inner.sort as Doc | undefined, limit: 1 } };
    case 'update': {
      const first = Array.isArray(inner.updates) && isPlainObject(inner.updates[0]) ? inner.updates[0] : {};
      return { ns, spec: { filter: (first.q as Doc) ?? {}, hint: first.hint, limit: first.multi === true ? 0 : 1 } };
    }
    case 'delete': {
      const first = Array.isArray(inner.deletes) && isPlainObject(inner.deletes[0]) ? inner.deletes[0] : {};
      return { ns, spec: { filter: (first.q as Doc) ?? {}, hint: first.hint, limit: isNumber(first.limit) ? toDouble(first.limit) : 0 } };
    }
    default:
      throw new MongoError(ErrorCodes.CommandNotFound, `Explain failed due to unknown command: ${name}`);
  }
}

// The collation the explained command names (a write's is its first statement's).
function explainedCollation(inner: Doc): unknown {
  for (const list of [inner.updates, inner.deletes]) {
    if (Array.isArray(list) && isPlainObject(list[0])) return list[0].collation;
  }
  return inner.collation;
}

function planStage(plan: QueryPlan | undefined, prepared: PreparedFind, spec: FindSpec): Doc {
  let stage: Doc;
  if (!plan) stage = { stage: 'EOF' };
  else if (plan.kind === 'COLLSCAN') stage = { stage: 'COLLSCAN', filter: spec.filter, direction: plan.direction === 1 ? 'forward' : 'backward' };
  else if (plan.kind === 'IDHACK') stage = { stage: 'IDHACK' };
  else if (plan.text !== undefined) stage = textStage(plan, plan.text, spec);
  else {
    stage = { stage: 'FETCH', filter: spec.filter, inputStage: indexScanStage(plan) };
    // A $near's search reads its index ring by ring under MongoDB's GEO_NEAR stage.
    if (plan.geoNear !== undefined) {
      stage = { stage: plan.geoNear === '2dsphere' ? 'GEO_NEAR_2DSPHERE' : 'GEO_NEAR_2D', keyPattern: plan.index.keyPattern, indexName: plan.index.name, indexVersion: 2, inputStage: stage };
    }
  }
  if (prepared.blockingSort) stage = { stage: 'SORT', sortPattern: spec.sort, inputStage: stage };
  if (spec.skip) stage = { stage: 'SKIP', skipAmount: spec.skip, inputStage: stage };
  if (spec.limit) stage = { stage: 'LIMIT', limitAmount: spec.limit, inputStage: stage };
  if (spec.projection && Object.keys(spec.projection).length > 0) stage = { stage: 'PROJECTION_DEFAULT', transformBy: spec.projection, inputStage: stage };
  return stage;
}

function indexScanStage(plan: QueryPlan & { kind: 'IXSCAN' }, indexBounds = plan.indexBounds): Doc {
  const spec = plan.index.entry.spec;
  return {
    stage: 'IXSCAN', keyPattern: plan.index.keyPattern, indexName: plan.index.name,
    ...(spec.collation === undefined ? {} : { collation: spec.collation }),
    isMultiKey: plan.index.entry.multikey,
    isUnique: spec.unique === true, isSparse: spec.sparse === true, isPartial: spec.partialFilterExpression !== undefined,
    indexVersion: 2, direction: plan.direction === 1 ? 'forward' : 'backward', indexBounds,
  };
}

// A $text search as MongoDB shows it: TEXT_MATCH (phrases and negations) over one index scan per
// term, ORed by TEXT_OR when scores are wanted, else fetched after a plain OR; under an $or, that
// stage and the other clauses' index scans are ORed and fetched.
function textStage(plan: QueryPlan & { kind: 'IXSCAN' }, text: TextSearchPlan, spec: FindSpec): Doc {
  const scans = plan.indexBounds._fts!.map((term) => indexScanStage(plan, { ...plan.indexBounds, _fts: [term] }));
  const union = scans.length === 1 ? scans[0]! : { stage: 'OR', inputStages: scans };
  const match: Doc = {
    stage: 'TEXT_MATCH', indexPrefix: text.indexPrefix, indexName: plan.index.name, parsedTextQuery: text.parsedTextQuery, textIndexVersion: 3,
    inputStage: text.wantsScore ? { stage: 'TEXT_OR', inputStages: scans } : { stage: 'FETCH', inputStage: union },
  };
  if (text.orClauses === undefined) return match;
  const others = text.orClauses.map((p) => (p.kind === 'IXSCAN' ? indexScanStage(p) : { stage: 'IDHACK' }));
  return { stage: 'FETCH', filter: spec.filter, inputStage: { stage: 'OR', inputStages: [match, ...others] } };
}

export function explainFind(ctx: Parameters<CommandDefinition['run']>[0], ns: string, spec: FindSpec, verbosity: string): Doc {
  const { storage } = ctx.node;
  const started = ctx.node.wallClock.now();
  const prepared = prepareFind(storage, storage.getCollection(ns), spec);
  const winningPlan = planStage(prepared.plan, prepared, spec);
  const out: Doc = {
    explainVersion: '1',
    queryPlanner: { namespace: ns, indexFilterSet: false, parsedQuery: spec.filter, winningPlan, rejectedPlans: [] },
  };
  if (verbosity !== 'queryPlanner') {
    for (const _ of prepared.results) { /* drain: the stats are the point */ }
    out.executionStats = {
      executionSuccess: true,
      nReturned: prepared.stats.nReturned,
      executionTimeMillis: ctx.node.wallClock.now() - started,
      totalKeysExamined: prepared.stats.keysExamined,
      totalDocsExamined: prepared.stats.docsExamined,
      executionStages: { ...winningPlan, nReturned: prepared.stats.nReturned, keysExamined: prepared.stats.keysExamined, docsExamined: prepared.stats.docsExamined },
    };
  }
  out.serverInfo = { host: os.hostname(), port: ctx.node.options.port, version: SERVER_VERSION, gitVersion: 'docshard' };
  return out;
}

export const explainCommand: CommandDefinition = {
  names: ['explain'],
  run(ctx, cmd) {
    const inner = cmd.explain;
    if (!isPlainObject(inner)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'explain.explain' is the wrong type, expected type 'object'");
    const verbosity = typeof cmd.verbosity === 'string' ? cmd.verbosity : 'allPlansExecution';
    if (!['queryPlanner', 'executionStats', 'allPlansExecution'].includes(verbosity)) {
      throw new MongoError(ErrorCodes.FailedToParse, `verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}`);
    }
    const withDb = { ...inner, $db: ctx.db };
    if (commandName(inner) === 'aggregate') {
      const parsed = parseAggregate(ctx, { ...withDb, cursor: {} });
      const { find, rest } = splitPushdown(parsed.pipeline);
      find.hint = parsed.hint;
      find.collation = parsed.collation;
      find.variables = parsed.variables;
      const out = explainFind(ctx, parsed.ns, find, verbosity);
      return { ...out, stages: explainStages(rest), command: inner, ok: 1 };
    }
    const { ns, spec } = findSpecOf(inner, ctx.db);
    spec.collation = commandCollation(ctx.node.storage, ns, explainedCollation(inner));
    return { ...explainFind(ctx, ns, spec, verbosity), command: inner, ok: 1 };
  },
};
