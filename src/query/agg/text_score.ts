import { isPlainObject, type Doc } from '../../bson/values.js';
import { extractText } from '../exec/text_query.js';

// A pipeline that starts with a $text $match reads its documents' scores ({$meta: 'textScore'})
// in later stages. Documents carry no metadata between stages here, so the score is made a field
// right after the $match (the collection read fills it in, as a find projection) and every
// {$meta: 'textScore'} after it reads that field; the field is taken off at the end. A $sort by
// the score becomes a sort by that field, which a router can merge like any other.
export const TEXT_SCORE_FIELD = '__docshardTextScore';

const SCORE_STAGE: Doc = { $addFields: { [TEXT_SCORE_FIELD]: { $meta: 'textScore' } } };

export function isTextScoreStage(stage: Doc | undefined): boolean {
  if (stage === undefined || !isPlainObject(stage.$addFields)) return false;
  const fields = stage.$addFields;
  return Object.keys(fields).length === 1 && isTextScoreMeta(fields[TEXT_SCORE_FIELD]);
}

export function startsWithText(pipeline: readonly Doc[]): boolean {
  const first = pipeline[0];
  return first !== undefined && isPlainObject(first.$match) && extractText(first.$match) !== undefined;
}

// The pipeline has been validated (a $text $match anywhere but first is refused there).
export function rewriteTextScore(pipeline: Doc[]): Doc[] {
  if (!startsWithText(pipeline) || isTextScoreStage(pipeline[1])) return pipeline;
  const rest = pipeline.slice(1).map(readScoreField);
  const last = rest[rest.length - 1];
  const writes = last !== undefined && ('$out' in last || '$merge' in last);
  const body = writes ? rest.slice(0, -1) : rest;
  return [pipeline[0]!, SCORE_STAGE, ...body, { $unset: TEXT_SCORE_FIELD }, ...(writes ? [last] : [])];
}

function isTextScoreMeta(v: unknown): boolean {
  return isPlainObject(v) && Object.keys(v).length === 1 && v.$meta === 'textScore';
}

function readScoreField(stage: Doc): Doc {
  if (isPlainObject(stage.$sort)) {
    const sort: Doc = {};
    for (const [key, value] of Object.entries(stage.$sort)) {
      if (isTextScoreMeta(value)) sort[TEXT_SCORE_FIELD] = -1;
      else sort[key] = value;
    }
    return { $sort: sort };
  }
  return replaceMeta(stage) as Doc;
}

function replaceMeta(value: unknown): unknown {
  if (isTextScoreMeta(value)) return `$${TEXT_SCORE_FIELD}`;
  if (Array.isArray(value)) return value.map(replaceMeta);
  if (!isPlainObject(value)) return value;
  const out: Doc = {};
  for (const [k, v] of Object.entries(value)) out[k] = replaceMeta(v);
  return out;
}
