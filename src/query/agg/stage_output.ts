import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';

// $out and $merge as a node and a router both read them: where the results go and, for $merge,
// how each result meets the target. Writing them is the caller's (a node writes its storage, a
// router its routed write path).
export type OutputStage =
  | { kind: '$out'; db: string; coll: string }
  | { kind: '$merge'; db: string; coll: string; on: string[]; whenMatched: WhenMatched; whenNotMatched: WhenNotMatched };

export type WhenMatched = 'replace' | 'keepExisting' | 'merge' | 'fail';
export type WhenNotMatched = 'insert' | 'discard' | 'fail';

const WHEN_MATCHED: readonly WhenMatched[] = ['replace', 'keepExisting', 'merge', 'fail'];
const WHEN_NOT_MATCHED: readonly WhenNotMatched[] = ['insert', 'discard', 'fail'];

// The pipeline's last stage when it is $out or $merge (validatePipeline has put them last).
export function outputStageOf(pipeline: readonly Doc[], db: string): OutputStage | undefined {
  const last = pipeline[pipeline.length - 1];
  if (last === undefined) return undefined;
  if ('$out' in last) return { kind: '$out', ...target(last.$out, db, '$out') };
  if (!('$merge' in last)) return undefined;
  const spec = isPlainObject(last.$merge) ? last.$merge : { into: last.$merge };
  return {
    kind: '$merge',
    ...target(spec.into, db, '$merge'),
    on: onFields(spec.on),
    whenMatched: choice(spec.whenMatched, 'whenMatched', WHEN_MATCHED, 'merge'),
    whenNotMatched: choice(spec.whenNotMatched, 'whenNotMatched', WHEN_NOT_MATCHED, 'insert'),
  };
}

// A $merge with whenNotMatched: 'fail' and a result that matches nothing.
export function mergeNoMatchError(): MongoError {
  return new MongoError(13113, '$merge could not find a matching document in the target collection for at least one document in the source collection');
}

// The target filter of one result: its `on` fields (missing ones as null).
export function mergeFilter(doc: Doc, on: readonly string[]): Doc {
  const filter: Doc = {};
  for (const f of on) filter[f] = doc[f] ?? null;
  return filter;
}

function target(spec: unknown, db: string, stage: string): { db: string; coll: string } {
  if (typeof spec === 'string' && spec !== '') return { db, coll: spec };
  if (isPlainObject(spec) && typeof spec.coll === 'string' && spec.coll !== '') {
    return { db: typeof spec.db === 'string' ? spec.db : db, coll: spec.coll };
  }
  throw new MongoError(ErrorCodes.FailedToParse, `${stage} stage requires a target collection, as a name or {db, coll}`);
}

function onFields(on: unknown): string[] {
  if (on === undefined) return ['_id'];
  const fields = Array.isArray(on) ? on : [on];
  if (fields.length === 0 || !fields.every((f) => typeof f === 'string')) {
    throw new MongoError(51186, "$merge 'on' field must be either a string or an array of strings");
  }
  return fields as string[];
}

function choice<T extends string>(value: unknown, field: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (Array.isArray(value) && field === 'whenMatched') {
    throw new MongoError(ErrorCodes.NotImplemented, '$merge with a pipeline for whenMatched is not supported');
  }
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${String(value)}' for field '${field}' is not a valid value.`);
}
