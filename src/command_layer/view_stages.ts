import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { optionalDoc, optionalNonNegative, optionalNumber } from './args.js';

// The aggregate command a read of a view becomes: over `coll`, the collection under the view, the
// views' pipeline and then `stages`, with the read's own `let`, `collation` and `readConcern`.
export function viewAggregate(db: string, coll: string, viewPipeline: readonly Doc[], stages: readonly unknown[], cursor: Doc, cmd: Doc): Doc {
  const agg: Doc = { aggregate: coll, pipeline: [...viewPipeline, ...stages], cursor, $db: db };
  for (const field of ['let', 'collation', 'readConcern']) if (cmd[field] !== undefined) agg[field] = cmd[field];
  return agg;
}

// The stages a find or a count of a view appends to the view's pipeline (MongoDB's
// asAggregationCommand), for a node and a router alike.
export function findStages(cmd: Doc): Doc[] {
  refuseOptionsNotInAggregation(cmd);
  const stages: Doc[] = [{ $match: optionalDoc(cmd, 'filter') ?? {} }];
  const sort = optionalDoc(cmd, 'sort');
  if (sort !== undefined && Object.keys(sort).length > 0) stages.push({ $sort: sort });
  const skip = optionalNonNegative(cmd, 'skip');
  if (skip !== undefined && skip > 0) stages.push({ $skip: skip });
  const limit = optionalNonNegative(cmd, 'limit');
  if (limit !== undefined && limit > 0) stages.push({ $limit: limit });
  const projection = optionalDoc(cmd, 'projection');
  if (projection !== undefined && Object.keys(projection).length > 0) stages.push({ $project: projection });
  return stages;
}

// Find options an aggregation cannot express fail a find on a view, as in MongoDB, in its order.
function refuseOptionsNotInAggregation(cmd: Doc): void {
  const set = (field: string): boolean => {
    const v = cmd[field];
    return isPlainObject(v) ? Object.keys(v).length > 0 : v === true || (isNumber(v) && toDouble(v) !== 0);
  };
  const refuse = (message: string): never => {
    throw new MongoError(ErrorCodes.InvalidPipelineOperator, message);
  };
  for (const field of ['min', 'max', 'returnKey', 'showRecordId']) if (set(field)) refuse(`Option ${field} not supported in aggregation.`);
  if (set('tailable')) refuse('Tailable cursors are not supported in aggregation.');
  for (const field of ['noCursorTimeout', 'allowPartialResults']) if (set(field)) refuse(`Option ${field} not supported in aggregation.`);
  if (isPlainObject(cmd.sort) && cmd.sort.$natural !== undefined) refuse('Sort option $natural not supported in aggregation.');
  for (const field of ['readOnce', 'allowSpeculativeMajorityRead', '$_requestResumeToken', '$_resumeAfter']) if (set(field)) refuse(`Option ${field} not supported in aggregation.`);
}

// Ends in {$count: 'n'}: one document {n} unless nothing matched.
export function countStages(cmd: Doc): Doc[] {
  const stages: Doc[] = [{ $match: optionalDoc(cmd, 'query') ?? {} }];
  const skip = Math.trunc(optionalNumber(cmd, 'skip') ?? 0);
  if (skip < 0) throw new MongoError(ErrorCodes.BadValue, 'skip value is negative in count query');
  if (skip > 0) stages.push({ $skip: skip });
  const limit = Math.abs(Math.trunc(optionalNumber(cmd, 'limit') ?? 0));
  if (limit > 0) stages.push({ $limit: limit });
  stages.push({ $count: 'n' });
  return stages;
}
