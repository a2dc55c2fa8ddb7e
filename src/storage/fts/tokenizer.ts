import type { TextLanguage } from './languages.js';

// Splits text into words as MongoDB's version 3 text tokenizer does: a word is a run of
// characters that are neither white space, punctuation nor symbols ('_' is part of words, and so
// is the apostrophe in English).
const DELIMITER = /[\p{White_Space}\p{P}\p{S}]/u;

function isDelimiter(c: string, language: TextLanguage): boolean {
  if (c === '_') return false;
  if (c === "'") return !language.apostropheInWords;
  return DELIMITER.test(c);
}

export function splitWords(text: string, language: TextLanguage): string[] {
  const words: string[] = [];
  let current = '';
  for (const c of text) {
    if (isDelimiter(c, language)) {
      if (current !== '') words.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  if (current !== '') words.push(current);
  return words;
}

export interface TermOptions {
  caseSensitive?: boolean;
  diacriticSensitive?: boolean;
}

// Text with its diacritics (combining marks after canonical decomposition) taken off, as version 3
// indexes and diacritic-insensitive queries compare it.
export function withoutDiacritics(text: string): string {
  return text.normalize('NFD').replace(/\p{Mn}/gu, '').normalize('NFC');
}

export function foldText(text: string, options: TermOptions): string {
  const cased = options.caseSensitive === true ? text : text.toLowerCase();
  return options.diacriticSensitive === true ? cased : withoutDiacritics(cased);
}

// The terms a text holds for the index (and a query): each word folded, stop words left out, the
// rest stemmed. Stop words are recognised in lower case whatever the options; a case-sensitive
// term keeps the case of the word's letters in the stem.
export function textTerms(text: string, language: TextLanguage, options: TermOptions = {}): string[] {
  const terms: string[] = [];
  for (const word of splitWords(text, language)) {
    const term = wordTerm(word, language, options);
    if (term !== undefined) terms.push(term);
  }
  return terms;
}

export function wordTerm(word: string, language: TextLanguage, options: TermOptions = {}): string | undefined {
  const lower = word.toLowerCase();
  if (language.stopWords.has(lower) || language.stopWords.has(withoutDiacritics(lower))) return undefined;
  const folded = foldText(word, options);
  const stem = language.stem(folded.toLowerCase());
  if (options.caseSensitive !== true) return stem;
  return folded.toLowerCase().startsWith(stem) ? folded.slice(0, stem.length) : stem;
}
