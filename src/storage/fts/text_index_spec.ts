import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { requireLanguage, type TextLanguage } from './languages.js';

// A text index's key pattern holds `_fts: 'text', _ftsx: 1` where its text fields were, between
// the fields before them (prefix: queries must give them by equality) and after them (suffix);
// the text fields themselves are its weights.
const TEXT_FIELD = '_fts';
const SCORE_FIELD = '_ftsx';
const WILDCARD = '$**';
const MAX_WEIGHT = 100_000;

export interface TextIndexSpec {
  weights: ReadonlyMap<string, number>;
  // `$**`: every string in the document is indexed, with weight 1 unless weights say otherwise.
  wildcard: boolean;
  defaultLanguage: TextLanguage;
  languageOverride: string;
  prefix: string[];
  suffix: string[];
}

export function isTextKeyPattern(key: Doc): boolean {
  return key[TEXT_FIELD] === 'text';
}

// Whether a key pattern as a client writes it asks for a text index.
export function asksForText(key: Doc): boolean {
  return Object.values(key).includes('text');
}

// The spec as MongoDB stores and lists it: key with _fts/_ftsx, weights by field name, the
// default language, the override field and textIndexVersion 3. A spec already in that form (from
// listIndexes, as a migration or a router copies it) comes out the same.
export function normalizeTextIndexSpec(raw: Doc): Doc {
  const weights = new Map<string, number>();
  const prefix: Doc = {};
  const suffix: Doc = {};
  let textSeen = false;
  for (const [field, value] of Object.entries(raw.key as Doc)) {
    if (field === TEXT_FIELD || field === SCORE_FIELD) {
      // Already normalised: the weights option names the text fields.
      textSeen = true;
    } else if (value === 'text') {
      weights.set(field, 1);
      textSeen = true;
    } else if (typeof value === 'string') {
      throw new MongoError(ErrorCodes.CannotCreateIndex, `Error in specification ${JSON.stringify(raw)} :: caused by :: a text index may not be compound with a '${value}' field`);
    } else if (textSeen) {
      suffix[field] = value;
    } else {
      prefix[field] = value;
    }
  }
  const key: Doc = { ...prefix, [TEXT_FIELD]: 'text', [SCORE_FIELD]: 1, ...suffix };
  if (raw.weights !== undefined) {
    if (!isPlainObject(raw.weights)) throw new MongoError(ErrorCodes.CannotCreateIndex, 'weights must be an object');
    for (const [field, w] of Object.entries(raw.weights)) {
      if (!isNumber(w) || !(toDouble(w) > 0) || toDouble(w) >= MAX_WEIGHT) {
        throw new MongoError(ErrorCodes.CannotCreateIndex, `Error in specification ${JSON.stringify(raw)} :: caused by :: text index weight must be in the exclusive interval (0,${MAX_WEIGHT}) but found: ${String(w)}`);
      }
      weights.set(field, toDouble(w));
    }
  }
  if (weights.size === 0) throw new MongoError(ErrorCodes.CannotCreateIndex, `Error in specification ${JSON.stringify(raw)} :: caused by :: text index option 'weights' must name at least one field`);
  const defaultLanguage = raw.default_language ?? 'english';
  requireLanguage(defaultLanguage);
  const languageOverride = raw.language_override ?? 'language';
  if (typeof languageOverride !== 'string') throw new MongoError(ErrorCodes.CannotCreateIndex, 'language_override must be a string');
  const sortedWeights: Doc = {};
  for (const field of [...weights.keys()].sort()) sortedWeights[field] = weights.get(field);
  const spec: Doc = { ...raw, key, weights: sortedWeights, default_language: defaultLanguage, language_override: languageOverride, textIndexVersion: 3 };
  return spec;
}

const parsed = new WeakMap<Doc, TextIndexSpec>();

// The parts of a stored (normalised) text index spec that key generation and queries need.
export function textIndexSpec(spec: Doc): TextIndexSpec {
  let out = parsed.get(spec);
  if (out !== undefined) return out;
  const key = spec.key as Doc;
  const fields = Object.keys(key);
  const at = fields.indexOf(TEXT_FIELD);
  const weights = new Map<string, number>();
  for (const [field, w] of Object.entries((spec.weights ?? {}) as Doc)) weights.set(field, toDouble(w));
  out = {
    weights,
    wildcard: weights.has(WILDCARD),
    defaultLanguage: requireLanguage(spec.default_language ?? 'english'),
    languageOverride: typeof spec.language_override === 'string' ? spec.language_override : 'language',
    prefix: fields.slice(0, at),
    suffix: fields.slice(at + 2),
  };
  parsed.set(spec, out);
  return out;
}
