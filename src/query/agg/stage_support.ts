import { isPlainObject, type Doc } from '../../bson/values.js';
import { parseExpression } from './expression.js';

export interface PipelineContext {
  db: string;
  readCollection(coll: string): Iterable<Doc>;
  collStats?(coll: string, spec: Doc): Doc;
  variables?: Record<string, unknown>;
  // $$NOW: the operation's time, from its process's clock; absent only where a pipeline is
  // parsed to be checked and not run.
  now?: Date;
  // The collection the pipeline reads, named to $collStats.
  collection?: string;
}

// A parsed stage: given its input and the variables of this run (which differ per outer document
// inside a $lookup sub-pipeline), it yields its output.
export type Stage = (input: Iterable<Doc>, vars: Record<string, unknown>) => Iterable<Doc>;

export type CompiledPipeline = Stage;

export type SubPipelineKind = 'lookup' | 'facet' | 'unionWith';

export interface StageEnv {
  ctx: PipelineContext;
  varNames: string[];
  compilePipeline(pipeline: unknown, varNames: string[], kind: SubPipelineKind): CompiledPipeline;
}

export type StageParser = (spec: unknown, env: StageEnv, name: string) => Stage;

// `root` differs from `doc` only where a stage evaluates against part of a document ($redact).
export type DocEvaluator = (doc: Doc, vars: Record<string, unknown>, root?: Doc) => unknown;

export function compileDocExpression(expr: unknown, env: StageEnv): DocEvaluator {
  const evaluate = parseExpression(expr, env.varNames);
  return (doc, vars, root = doc) => evaluate({ root, vars: { ...vars, CURRENT: doc } });
}

// `doc` with `value` at `path`, copying each document on the way rather than changing it; a
// non-document on the way is replaced by one ($lookup's `as`, $graphLookup's `as` and `depthField`).
export function setAtPath(doc: Doc, path: readonly string[], value: unknown): Doc {
  const out: Doc = { ...doc };
  let target = out;
  for (let i = 0; i < path.length - 1; i++) {
    const next = target[path[i]!];
    const copy: Doc = isPlainObject(next) ? { ...next } : {};
    target[path[i]!] = copy;
    target = copy;
  }
  target[path[path.length - 1]!] = value;
  return out;
}
