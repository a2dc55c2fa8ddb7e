import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { stemEnglish } from './english_stemmer.js';
import { ENGLISH_STOP_WORDS } from './stop_words.js';

// A text search language: how its words are stemmed, which it leaves out, and whether an
// apostrophe is part of a word (in English only, as MongoDB's tokenizer decides).
export interface TextLanguage {
  name: string;
  stem: (word: string) => string;
  stopWords: ReadonlySet<string>;
  apostropheInWords: boolean;
}

const ENGLISH: TextLanguage = { name: 'english', stem: stemEnglish, stopWords: ENGLISH_STOP_WORDS, apostropheInWords: true };
const NONE: TextLanguage = { name: 'none', stem: (w) => w, stopWords: new Set(), apostropheInWords: false };

// MongoDB's names and ISO 639-1 codes. Only English has a stemmer and stop words here (see
// english_stemmer.ts); the other languages MongoDB knows are refused rather than indexed wrongly.
const BY_NAME = new Map<string, TextLanguage>([['english', ENGLISH], ['en', ENGLISH], ['none', NONE]]);

const KNOWN_ELSEWHERE = new Set([
  'danish', 'da', 'dutch', 'nl', 'finnish', 'fi', 'french', 'fr', 'german', 'de', 'hungarian', 'hu', 'italian', 'it',
  'norwegian', 'nb', 'portuguese', 'pt', 'romanian', 'ro', 'russian', 'ru', 'spanish', 'es', 'swedish', 'sv', 'turkish', 'tr',
]);

export function textLanguage(name: unknown): TextLanguage | undefined {
  return typeof name === 'string' ? BY_NAME.get(name.toLowerCase()) : undefined;
}

// A language named by an index spec, a document or a query: MongoDB answers BadValue for one it
// does not know; one it knows that docshard has no stemmer for gets the same code, saying so.
export function requireLanguage(name: unknown): TextLanguage {
  const language = textLanguage(name);
  if (language !== undefined) return language;
  if (typeof name === 'string' && KNOWN_ELSEWHERE.has(name.toLowerCase())) {
    throw new MongoError(ErrorCodes.BadValue, `unsupported language: "${name}" for text index version 3 (docshard has stemmers for english and none only)`);
  }
  throw new MongoError(ErrorCodes.BadValue, `unsupported language: "${String(name)}" for text index version 3`);
}
