import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';

// A shard's answer to a routed read of a view (CommandOnShardedViewNotSupportedOnMongod): the
// collection under the view and the pipelines in front of it, for the router to run.
export interface ResolvedView {
  coll: string;
  pipeline: Doc[];
}

export function resolvedViewOf(err: unknown): ResolvedView | undefined {
  if (!(err instanceof MongoError) || err.code !== ErrorCodes.CommandOnShardedViewNotSupportedOnMongod) return undefined;
  const resolved = err.extra.resolvedView;
  if (!isPlainObject(resolved) || typeof resolved.ns !== 'string') return undefined;
  return { coll: resolved.ns.slice(resolved.ns.indexOf('.') + 1), pipeline: Array.isArray(resolved.pipeline) ? (resolved.pipeline as Doc[]) : [] };
}
