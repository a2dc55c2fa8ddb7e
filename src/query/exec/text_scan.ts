import { encodeKey } from '../../bson/key_string.js';
import { formatValue } from '../../bson/format.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { IndexAccess } from '../../storage/index_access.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import { prefixSuccessor } from '../../storage/key_layout.js';
import { indexedStrings, indexTerm, termScores } from '../../storage/fts/text_keys.js';
import type { StringComparator } from '../../bson/collation.js';
import { compileFilter, type Matcher } from '../match/matcher.js';
import { planQuery, type KeyRange, type QueryPlan } from '../plan/query_planner.js';
import { executePlan, fetchCandidate, type Candidate, type ExecutionStats } from './plan_executor.js';
import { passesTextFilter, type TextQuery, type TextUnderOr } from './text_query.js';

type FilterOptions = NonNullable<Parameters<typeof compileFilter>[1]>;

// A $text query read from the text index (MongoDB's TEXT_OR over one index scan per term, then
// TEXT_MATCH): the entries of each term give the records, each record is fetched once, the rest
// of the filter and the phrases and negations are checked on it, and its score is the sum of what
// it is worth to each term searched for.
export function textIndexOf(coll: Collection | undefined): IndexAccess {
  const index = coll?.indexes.find((i) => i.text !== undefined);
  if (index !== undefined) return index;
  throw new MongoError(ErrorCodes.IndexNotFound, 'text index required for $text query');
}

// The scan, as explain shows it: the text index over the key ranges of the terms searched for.
export function textPlan(index: IndexAccess, query: TextQuery, filter: Doc, wantsScore: boolean): QueryPlan & { kind: 'IXSCAN' } {
  const prefix = prefixValues(index, filter);
  const order = index.ordering.slice(0, prefix.length + 1);
  const ranges: KeyRange[] = query.indexTerms.map((term) => {
    const start = encodeKey([...prefix, term], order);
    return { start, end: prefixSuccessor(start) };
  });
  const indexBounds: Record<string, string[]> = {};
  for (const field of Object.keys(index.keyPattern)) indexBounds[field] = [];
  index.text!.prefix.forEach((field, i) => { indexBounds[field] = [`[${formatValue(prefix[i])}, ${formatValue(prefix[i])}]`]; });
  indexBounds._fts = query.indexTerms.map((t) => `["${t}", "${t}"]`);
  const text = {
    parsedTextQuery: { terms: query.positiveTerms, negatedTerms: query.negatedTerms, phrases: query.phrases, negatedPhrases: query.negatedPhrases },
    indexPrefix: Object.fromEntries(index.text!.prefix.map((field, i) => [field, prefix[i]])),
    wantsScore,
  };
  return { kind: 'IXSCAN', index, ranges, direction: 1, indexBounds, providesSort: false, text };
}

// A $text as one clause of an $or (MongoDB's TEXT under OR): every other clause must be answered
// from an index other than the text index, as MongoDB's planner requires; each gets its plan.
export function planTextUnderOr(plan: QueryPlan & { kind: 'IXSCAN' }, coll: Collection, or: TextUnderOr, collation: StringComparator | undefined): QueryPlan & { kind: 'IXSCAN' } {
  const indexes = coll.indexes.filter((i) => i.text === undefined);
  const orClauses = or.others.map((clause) => {
    const clausePlan = isPlainObject(clause) ? planQuery({ filter: clause, collation }, indexes) : undefined;
    if (clausePlan === undefined || clausePlan.kind === 'COLLSCAN') {
      throw new MongoError(ErrorCodes.NoQueryExecutionPlans, 'error processing query: planner returned error :: caused by :: Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well.');
    }
    return clausePlan;
  });
  return { ...plan, text: { ...plan.text!, orClauses } };
}

// The documents of a $text under $or: those the text search finds (with their score) and those
// each other clause's index scan finds, each record once in record order, checked against the
// rest of the filter.
export function* textUnderOrCandidates(
  storage: StorageEngine, coll: Collection, plan: QueryPlan & { kind: 'IXSCAN' }, query: TextQuery, or: TextUnderOr, rest: Matcher | undefined, stats: ExecutionStats, options: FilterOptions,
): Iterable<Candidate> {
  const textClause = Object.keys(or.textClause).length === 0 ? undefined : compileFilter(or.textClause, options);
  const scores = new Map<number, number>();
  for (const c of textCandidates(storage, coll, plan, query, textClause, stats)) scores.set(c.recordId, c.textScore!);
  const recordIds = new Set(scores.keys());
  plan.text!.orClauses!.forEach((clausePlan, i) => {
    for (const c of executePlan(storage, coll, clausePlan, compileFilter(or.others[i]!, options), stats)) recordIds.add(c.recordId);
  });
  for (const recordId of [...recordIds].sort((a, b) => a - b)) {
    const candidate = fetchCandidate(storage, coll, recordId, rest, stats);
    if (candidate === undefined) continue;
    candidate.textScore = scores.get(recordId);
    yield candidate;
  }
}

// A compound text index is read for one value of each prefix field, which the filter must give by
// equality.
function prefixValues(index: IndexAccess, filter: Doc): unknown[] {
  return index.text!.prefix.map((field) => {
    const condition = filter[field];
    if (condition !== undefined && !isPlainObject(condition) && !Array.isArray(condition)) return condition;
    if (isPlainObject(condition) && Object.keys(condition).length === 1 && condition.$eq !== undefined && !isPlainObject(condition.$eq)) return condition.$eq;
    throw new MongoError(ErrorCodes.BadValue, 'error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)');
  });
}

export function* textCandidates(
  storage: StorageEngine, coll: Collection, plan: QueryPlan & { kind: 'IXSCAN' }, query: TextQuery, matcher: Matcher | undefined, stats: ExecutionStats,
): Iterable<Candidate> {
  const { index } = plan;
  const spec = index.text!;
  const recordIds = new Set<number>();
  for (const range of plan.ranges) {
    for (const { recordId } of index.scan(storage.kv, range.start, range.end, false)) {
      stats.keysExamined += 1;
      recordIds.add(recordId);
    }
  }
  const wanted = new Set(query.indexTerms);
  for (const recordId of [...recordIds].sort((a, b) => a - b)) {
    const candidate = fetchCandidate(storage, coll, recordId, matcher, stats);
    if (candidate === undefined || !passesTextFilter(query, indexedStrings(candidate.doc, spec))) continue;
    let score = 0;
    for (const [term, value] of termScores(candidate.doc, spec)) if (wanted.has(indexTerm(term))) score += value;
    candidate.textScore = score;
    yield candidate;
  }
}
