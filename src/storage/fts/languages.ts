import { newStemmer } from 'snowball-stemmers';
import { stopwords as danishStopWords } from '@orama/stopwords/danish';
import { stopwords as dutchStopWords } from '@orama/stopwords/dutch';
import { stopwords as finnishStopWords } from '@orama/stopwords/finnish';
import { stopwords as frenchStopWords } from '@orama/stopwords/french';
import { stopwords as germanStopWords } from '@orama/stopwords/german';
import { stopwords as hungarianStopWords } from '@orama/stopwords/hungarian';
import { stopwords as italianStopWords } from '@orama/stopwords/italian';
import { stopwords as norwegianStopWords } from '@orama/stopwords/norwegian';
import { stopwords as portugueseStopWords } from '@orama/stopwords/portuguese';
import { stopwords as romanianStopWords } from '@orama/stopwords/romanian';
import { stopwords as russianStopWords } from '@orama/stopwords/russian';
import { stopwords as spanishStopWords } from '@orama/stopwords/spanish';
import { stopwords as swedishStopWords } from '@orama/stopwords/swedish';
import { stopwords as turkishStopWords } from '@orama/stopwords/turkish';
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

// MongoDB stems with Snowball's stemmers (libstemmer) and leaves out Snowball's stop word lists.
// The same algorithms and lists come from npm: `snowball-stemmers` (a port of the Snowball
// stemmers) and `@orama/stopwords` (Snowball's lists). English keeps its own Porter2 stemmer
// (english_stemmer.ts), which stemmer_reference_test checks against the Snowball one.
const SNOWBALL_LANGUAGES: Readonly<Record<string, { code: string; stopWords: readonly string[] }>> = {
  danish: { code: 'da', stopWords: danishStopWords },
  dutch: { code: 'nl', stopWords: dutchStopWords },
  finnish: { code: 'fi', stopWords: finnishStopWords },
  french: { code: 'fr', stopWords: frenchStopWords },
  german: { code: 'de', stopWords: germanStopWords },
  hungarian: { code: 'hu', stopWords: hungarianStopWords },
  italian: { code: 'it', stopWords: italianStopWords },
  norwegian: { code: 'nb', stopWords: norwegianStopWords },
  portuguese: { code: 'pt', stopWords: portugueseStopWords },
  romanian: { code: 'ro', stopWords: romanianStopWords },
  russian: { code: 'ru', stopWords: russianStopWords },
  spanish: { code: 'es', stopWords: spanishStopWords },
  swedish: { code: 'sv', stopWords: swedishStopWords },
  turkish: { code: 'tr', stopWords: turkishStopWords },
};

const ENGLISH: TextLanguage = { name: 'english', stem: stemEnglish, stopWords: ENGLISH_STOP_WORDS, apostropheInWords: true };
const NONE: TextLanguage = { name: 'none', stem: (w) => w, stopWords: new Set(), apostropheInWords: false };

// A language's stemmer and stop word set are built when it is first named.
function snowballLanguage(name: string): TextLanguage {
  const stemmer = newStemmer(name);
  const stopWords = new Set(SNOWBALL_LANGUAGES[name]!.stopWords.map((w) => w.toLowerCase()));
  return { name, stem: (w) => stemmer.stem(w), stopWords, apostropheInWords: false };
}

// MongoDB's names and ISO 639-1 codes (MongoDB names Norwegian bokmål `nb`).
const NAMES = new Map<string, string>([['english', 'english'], ['en', 'english'], ['none', 'none']]);
for (const [name, { code }] of Object.entries(SNOWBALL_LANGUAGES)) {
  NAMES.set(name, name);
  NAMES.set(code, name);
}

const loaded = new Map<string, TextLanguage>([['english', ENGLISH], ['none', NONE]]);

export function textLanguage(name: unknown): TextLanguage | undefined {
  if (typeof name !== 'string') return undefined;
  const canonical = NAMES.get(name.toLowerCase());
  if (canonical === undefined) return undefined;
  let language = loaded.get(canonical);
  if (language === undefined) {
    language = snowballLanguage(canonical);
    loaded.set(canonical, language);
  }
  return language;
}

// A language named by an index spec, a document or a query: MongoDB answers BadValue for one it
// does not know.
export function requireLanguage(name: unknown): TextLanguage {
  const language = textLanguage(name);
  if (language !== undefined) return language;
  throw new MongoError(ErrorCodes.BadValue, `unsupported language: "${String(name)}" for text index version 3`);
}
