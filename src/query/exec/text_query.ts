import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { requireLanguage, type TextLanguage } from '../../storage/fts/languages.js';
import { foldText, splitWords, textTerms, wordTerm, type TermOptions } from '../../storage/fts/tokenizer.js';
import { indexTerm } from '../../storage/fts/text_keys.js';
import type { TextIndexSpec } from '../../storage/fts/text_index_spec.js';

// A parsed {$text: {$search, $language, $caseSensitive, $diacriticSensitive}} (MongoDB's
// FTSQuery): the terms the index is read for (folded as the index holds them), the same terms as
// the options compare them, the terms a document must not hold and the phrases it must and must
// not hold.
export interface TextQuery {
  language: TextLanguage;
  options: TermOptions;
  indexTerms: string[];
  positiveTerms: string[];
  negatedTerms: string[];
  phrases: string[];
  negatedPhrases: string[];
}

const TEXT_FIELDS = new Set(['$search', '$language', '$caseSensitive', '$diacriticSensitive']);

export function parseTextQuery(arg: unknown, index: TextIndexSpec): TextQuery {
  if (!isPlainObject(arg)) throw new MongoError(ErrorCodes.BadValue, '$text expects an object');
  for (const field of Object.keys(arg)) {
    if (!TEXT_FIELDS.has(field)) throw new MongoError(ErrorCodes.BadValue, `extra fields in $text: ${field}`);
  }
  if (typeof arg.$search !== 'string') throw new MongoError(ErrorCodes.BadValue, '$search required and must be a string');
  for (const flag of ['$caseSensitive', '$diacriticSensitive']) {
    if (arg[flag] !== undefined && typeof arg[flag] !== 'boolean') throw new MongoError(ErrorCodes.BadValue, `${flag} requires a boolean value`);
  }
  if (arg.$language !== undefined && typeof arg.$language !== 'string') throw new MongoError(ErrorCodes.BadValue, '$language requires a string value');
  const language = arg.$language === undefined ? index.defaultLanguage : requireLanguage(arg.$language);
  const options: TermOptions = { caseSensitive: arg.$caseSensitive === true, diacriticSensitive: arg.$diacriticSensitive === true };
  return parseSearch(arg.$search, language, options);
}

// The $search string: words are searched for (any of them), "quoted text" is a phrase, and a '-'
// that starts a word or a phrase negates it. Words of a positive phrase are searched for too.
function parseSearch(search: string, language: TextLanguage, options: TermOptions): TextQuery {
  const query: TextQuery = { language, options, indexTerms: [], positiveTerms: [], negatedTerms: [], phrases: [], negatedPhrases: [] };
  const positive = new Set<string>();
  const indexed = new Set<string>();
  const negated = new Set<string>();
  const addWords = (text: string, isNegated: boolean): void => {
    for (const word of splitWords(text, language)) {
      const term = wordTerm(word, language, options);
      if (term === undefined) continue;
      if (isNegated) {
        negated.add(term);
        continue;
      }
      positive.add(term);
      indexed.add(indexTerm(wordTerm(word, language)!));
    }
  };
  let i = 0;
  while (i < search.length) {
    const c = search[i]!;
    if (/\s/u.test(c)) {
      i += 1;
      continue;
    }
    const dashed = c === '-';
    const start = dashed ? i + 1 : i;
    if (search[start] === '"') {
      const close = search.indexOf('"', start + 1);
      const end = close === -1 ? search.length : close;
      const phrase = search.slice(start + 1, end);
      if (phrase.trim() !== '') (dashed ? query.negatedPhrases : query.phrases).push(phrase);
      if (!dashed) addWords(phrase, false);
      i = end + 1;
      continue;
    }
    let end = start;
    while (end < search.length && !/\s/u.test(search[end]!) && search[end] !== '"') end += 1;
    addWords(search.slice(start, end), dashed);
    i = end;
  }
  query.positiveTerms = [...positive];
  query.indexTerms = [...indexed];
  query.negatedTerms = [...negated];
  return query;
}

// Whether a document (its indexed strings, in its language) passes what the index scan cannot
// decide (MongoDB's FTSMatcher): a case- or diacritic-sensitive query needs one of its terms as
// written; no negated term or phrase may be there, and every phrase must be.
export function passesTextFilter(query: TextQuery, indexed: readonly { readonly text: string; readonly language: TextLanguage }[]): boolean {
  const { options } = query;
  const sensitive = options.caseSensitive === true || options.diacriticSensitive === true;
  const strings = indexed.map((s) => s.text);
  if (sensitive || query.negatedTerms.length > 0) {
    const terms = new Set(indexed.flatMap((s) => textTerms(s.text, s.language, options)));
    if (sensitive && !query.positiveTerms.some((t) => terms.has(t))) return false;
    if (query.negatedTerms.some((t) => terms.has(t))) return false;
  }
  if (query.phrases.length === 0 && query.negatedPhrases.length === 0) return true;
  const folded = strings.map((s) => foldText(s, options));
  const holds = (phrase: string): boolean => {
    const p = foldText(phrase, options);
    return folded.some((s) => s.includes(p));
  };
  return query.phrases.every(holds) && !query.negatedPhrases.some(holds);
}

// A $text that is one clause of an $or: the rest of that clause (ANDed with the $text) and the
// other clauses, each of which must be answerable from an index (MongoDB's rule for TEXT under OR).
export interface TextUnderOr {
  textClause: Doc;
  others: Doc[];
}

// The $text of a filter (at its top, in a top-level $and, or as a clause of an $or there) and the
// filter without it (without that $or when it is in one).
export function extractText(filter: Doc): { text: unknown; rest: Doc; or?: TextUnderOr } | undefined {
  // Every find asks: most filters have neither key, and are not copied.
  if (!Object.hasOwn(filter, '$text') && !Object.hasOwn(filter, '$and') && !Object.hasOwn(filter, '$or') && !Object.hasOwn(filter, '$nor')) return undefined;
  let text: unknown;
  let or: TextUnderOr | undefined;
  let count = 0;
  const found = (value: unknown): void => {
    text = value;
    count += 1;
  };
  const strip = (f: Doc): Doc => {
    const out: Doc = {};
    for (const [key, value] of Object.entries(f)) {
      if (key === '$text') {
        found(value);
      } else if (key === '$and' && Array.isArray(value)) {
        out.$and = value.map((clause) => (isPlainObject(clause) ? strip(clause) : clause));
      } else if (key === '$or' && Array.isArray(value) && value.some(holdsTextAtTop)) {
        const [textClause, ...more] = value.filter(holdsTextAtTop) as Doc[];
        if (more.length > 0) throw new MongoError(ErrorCodes.BadValue, 'Too many text expressions');
        const { $text, ...clauseRest } = textClause!;
        found($text);
        or = { textClause: clauseRest, others: value.filter((c) => c !== textClause) as Doc[] };
      } else if (key === '$nor' && holdsTextBelow(value)) {
        // As MongoDB's canonical query refuses it: a $text anywhere beneath a $nor.
        throw new MongoError(ErrorCodes.BadValue, 'text expression not allowed in nor');
      } else {
        out[key] = value;
      }
    }
    return out;
  };
  const rest = strip(filter);
  if (count === 0) return undefined;
  if (count > 1) throw new MongoError(ErrorCodes.BadValue, 'Too many text expressions');
  if (Array.isArray(rest.$and) && rest.$and.every((c) => isPlainObject(c) && Object.keys(c).length === 0)) delete rest.$and;
  return or === undefined ? { text, rest } : { text, rest, or };
}

function holdsTextBelow(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsTextBelow);
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, v]) => key === '$text' || ((key === '$and' || key === '$or' || key === '$nor') && holdsTextBelow(v)));
}

function holdsTextAtTop(clause: unknown): boolean {
  return isPlainObject(clause) && Object.hasOwn(clause, '$text');
}
