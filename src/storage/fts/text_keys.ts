import { createHash } from 'node:crypto';
import { encodeKey, type Ordering } from '../../bson/key_string.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { textLanguage, type TextLanguage } from './languages.js';
import { textTerms } from './tokenizer.js';
import type { TextIndexSpec } from './text_index_spec.js';

// What a document is worth to each term of a text index (MongoDB's FTSSpec::scoreDocument, in
// our words): every string under an indexed field is tokenized in the document's language; within
// one string, the k-th occurrence of a term adds 1/2^(k-1) (repeats count less and less), and the
// sum is scaled by 0.5 + 0.5 * (occurrences / terms in the string), so a term that makes up more of
// a short string counts more; the field's weight multiplies it, and strings add up.
export function termScores(doc: Doc, spec: TextIndexSpec): Map<string, number> {
  const scores = new Map<string, number>();
  for (const { text, weight, language } of indexedStrings(doc, spec)) scoreString(text, weight, language, scores);
  return scores;
}

// A string a text index reads, with its field's weight and its language: that of the nearest
// enclosing document naming one in its language override field (the document itself, or an
// embedded document on the way, as MongoDB's FTSElementIterator tracks it), else the index's.
export interface IndexedString {
  readonly text: string;
  readonly weight: number;
  readonly language: TextLanguage;
}

export function indexedStrings(doc: Doc, spec: TextIndexSpec): IndexedString[] {
  const out: IndexedString[] = [];
  const top = languageOf(doc, spec, spec.defaultLanguage);
  if (spec.wildcard) {
    // The language override names the document's language; it is not text of the document.
    eachString(doc, '', top, spec, (path, text, language) => {
      if (path.split('.').pop() !== spec.languageOverride) out.push({ text, weight: spec.weights.get(path) ?? 1, language });
    });
    return out;
  }
  for (const [path, weight] of spec.weights) {
    stringsAt(doc, path.split('.'), top, spec, (text, language) => out.push({ text, weight, language }));
  }
  return out;
}

// The language a document (or an embedded one) names in its language override field, else the
// one around it; a write of a document naming one MongoDB lacks is refused as mongod refuses it.
function languageOf(doc: Doc, spec: TextIndexSpec, around: TextLanguage): TextLanguage {
  const named = doc[spec.languageOverride];
  if (named === undefined) return around;
  if (typeof named !== 'string') throw new MongoError(17261, 'found language override field in document with non-string type');
  const language = textLanguage(named);
  if (language === undefined) throw new MongoError(17262, `language override unsupported: ${named}`);
  return language;
}

function scoreString(text: string, weight: number, language: TextLanguage, scores: Map<string, number>): void {
  const terms = textTerms(text, language);
  const seen = new Map<string, { count: number; freq: number }>();
  for (const term of terms) {
    const s = seen.get(term) ?? { count: 0, freq: 0 };
    s.freq += 1 / 2 ** s.count;
    s.count += 1;
    seen.set(term, s);
  }
  for (const [term, { count, freq }] of seen) {
    const coefficient = 0.5 * (count / terms.length) + 0.5;
    scores.set(term, (scores.get(term) ?? 0) + weight * freq * coefficient);
  }
}

// Strings reached by a dotted path, through arrays (of strings or of documents) on the way, each
// in the language of the document it sits in.
function stringsAt(value: unknown, path: readonly string[], language: TextLanguage, spec: TextIndexSpec, visit: (text: string, language: TextLanguage) => void): void {
  if (path.length === 0) {
    if (typeof value === 'string') visit(value, language);
    else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') visit(v, language);
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) stringsAt(v, path, isPlainObject(v) ? languageOf(v, spec, language) : language, spec, visit);
    return;
  }
  if (!isPlainObject(value) || !Object.hasOwn(value, path[0]!)) return;
  const next = value[path[0]!];
  stringsAt(next, path.slice(1), isPlainObject(next) ? languageOf(next, spec, language) : language, spec, visit);
}

function eachString(value: unknown, path: string, language: TextLanguage, spec: TextIndexSpec, visit: (path: string, text: string, language: TextLanguage) => void): void {
  if (typeof value === 'string') visit(path, value, language);
  else if (Array.isArray(value)) for (const v of value) eachString(v, path, language, spec, visit);
  else if (isPlainObject(value)) {
    const own = path === '' ? language : languageOf(value, spec, language);
    for (const [k, v] of Object.entries(value)) eachString(v, path === '' ? k : `${path}.${k}`, own, spec, visit);
  }
}

// Terms longer than this are kept as their first half and a hash of the whole (as MongoDB keeps a
// long term's prefix and its hash), so that any word fits an index key.
const LONG_TERM = 64;

export function indexTerm(term: string): string {
  if (term.length <= LONG_TERM) return term;
  return term.slice(0, LONG_TERM / 2) + createHash('md5').update(term).digest('hex');
}

// The index keys of a document: one per term, [prefix values, term, score, suffix values].
export function textIndexKeys(doc: Doc, spec: TextIndexSpec, ordering: Ordering): { keys: unknown[][]; encoded: Buffer[] } {
  const prefix = spec.prefix.map((f) => scalarField(doc, f));
  const suffix = spec.suffix.map((f) => scalarField(doc, f));
  const keys: unknown[][] = [];
  for (const [term, score] of termScores(doc, spec)) keys.push([...prefix, indexTerm(term), score, ...suffix]);
  const encoded = keys.map((k) => encodeKey(k, ordering));
  return { keys, encoded };
}

function scalarField(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) value = isPlainObject(value) && Object.hasOwn(value, part) ? value[part] : undefined;
  if (Array.isArray(value)) throw new MongoError(16675, `cannot have a multi-key as a prefix to a text index: field '${path}' holds an array`);
  return value ?? null;
}
