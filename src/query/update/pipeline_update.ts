import { mongoError } from '../../base/errors.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { runPipeline } from '../agg/pipeline.js';
import { replaceDocument } from './object_replace.js';

const UPDATE_STAGES = new Set(['$addFields', '$set', '$project', '$unset', '$replaceRoot', '$replaceWith']);

export function checkUpdatePipeline(pipeline: readonly unknown[]): void {
  for (const stage of pipeline) {
    const name = isPlainObject(stage) ? Object.keys(stage)[0] : undefined;
    if (name !== undefined && !UPDATE_STAGES.has(name)) {
      throw mongoError('InvalidOptions', `${name} is not allowed to be used within an update`);
    }
  }
}

// The pipeline's output replaces the document; the old _id survives a pipeline that drops it,
// and top-level '$' fields are allowed here ($replaceWith can produce them on purpose).
export function applyPipelineUpdate(pipeline: Doc[], doc: Doc, variables: Record<string, unknown> | undefined, now: Date): Doc {
  const ctx = { db: '', variables, now, readCollection: () => [], collStats: () => ({}) };
  const out = [...runPipeline(pipeline, [doc], ctx)];
  if (out.length !== 1) throw mongoError('InternalError', 'an update pipeline must produce exactly one document');
  return replaceDocument(doc, out[0]!, true);
}
