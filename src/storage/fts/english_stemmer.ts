// The Snowball English ("Porter2") stemmer, as libstemmer (which MongoDB links) applies it to words
// of an 'english' text index and query. Written here because no Snowball package is installed in
// this repository's node_modules; a maintained one (the `snowball-stemmers` npm package covers every
// language MongoDB's text search supports) should replace it, and with it the languages this
// module does not have. The input is one lower-cased word.

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u', 'y']);

const EXCEPTIONS = new Map<string, string>([
  ['skis', 'ski'], ['skies', 'sky'], ['dying', 'die'], ['lying', 'lie'], ['tying', 'tie'],
  ['idly', 'idl'], ['gently', 'gentl'], ['ugly', 'ugli'], ['early', 'earli'], ['only', 'onli'], ['singly', 'singl'],
  ['sky', 'sky'], ['news', 'news'], ['howe', 'howe'], ['atlas', 'atlas'], ['cosmos', 'cosmos'], ['bias', 'bias'], ['andes', 'andes'],
]);

// Words left as they are once step 1a has run.
const AFTER_1A = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);

const DOUBLES = new Set(['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt']);
const LI_ENDINGS = new Set(['c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't']);

const STEP2: [string, string][] = [
  ['ization', 'ize'], ['ational', 'ate'], ['fulness', 'ful'], ['ousness', 'ous'], ['iveness', 'ive'],
  ['tional', 'tion'], ['biliti', 'ble'], ['lessli', 'less'], ['entli', 'ent'], ['ation', 'ate'],
  ['alism', 'al'], ['aliti', 'al'], ['ousli', 'ous'], ['iviti', 'ive'], ['fulli', 'ful'],
  ['enci', 'ence'], ['anci', 'ance'], ['abli', 'able'], ['izer', 'ize'], ['ator', 'ate'], ['alli', 'al'],
  ['bli', 'ble'], ['ogi', 'og'], ['li', ''],
];

const STEP3: [string, string][] = [
  ['ational', 'ate'], ['tional', 'tion'], ['alize', 'al'], ['icate', 'ic'], ['iciti', 'ic'], ['ative', ''],
  ['ical', 'ic'], ['ness', ''], ['ful', ''],
];

const STEP4 = ['ement', 'ance', 'ence', 'able', 'ible', 'ment', 'ant', 'ent', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'ion', 'al', 'er', 'ic'];

export function stemEnglish(input: string): string {
  let w = input.startsWith("'") ? input.slice(1) : input;
  if (w.length <= 2) return w;
  const exception = EXCEPTIONS.get(w);
  if (exception !== undefined) return exception;
  w = markConsonantYs(w);
  const r1 = regionOne(w);
  const r2 = regionAfter(w, r1);
  w = step0(w);
  w = step1a(w);
  if (AFTER_1A.has(w)) return w;
  w = step1b(w, r1);
  w = step1c(w);
  w = step2(w, r1);
  w = step3(w, r1, r2);
  w = step4(w, r2);
  w = step5(w, r1, r2);
  return w.replaceAll('Y', 'y');
}

function isVowel(c: string | undefined): boolean {
  return c !== undefined && VOWELS.has(c);
}

// A y that starts the word or follows a vowel acts as a consonant: Y marks it.
function markConsonantYs(w: string): string {
  let out = '';
  for (let i = 0; i < w.length; i++) {
    const c = w[i]!;
    out += c === 'y' && (i === 0 || isVowel(out[i - 1])) ? 'Y' : c;
  }
  return out;
}

function regionOne(w: string): number {
  for (const prefix of ['gener', 'commun', 'arsen']) if (w.startsWith(prefix)) return prefix.length;
  return regionAfter(w, 0);
}

// Where the region after the first non-vowel that follows a vowel, from `from` on, starts.
function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) {
    if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  }
  return w.length;
}

function longest(w: string, suffixes: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const s of suffixes) if (w.endsWith(s) && (best === undefined || s.length > best.length)) best = s;
  return best;
}

function step0(w: string): string {
  const s = longest(w, ["'s'", "'s", "'"]);
  return s === undefined ? w : w.slice(0, -s.length);
}

function step1a(w: string): string {
  const s = longest(w, ['sses', 'ied', 'ies', 'us', 'ss', 's']);
  if (s === 'sses') return w.slice(0, -2);
  if (s === 'ied' || s === 'ies') return w.length - 3 > 1 ? w.slice(0, -2) : w.slice(0, -1);
  if (s === 's') {
    const stem = w.slice(0, -2);
    return [...stem].some(isVowel) ? w.slice(0, -1) : w;
  }
  return w;
}

function step1b(w: string, r1: number): string {
  const s = longest(w, ['eed', 'eedly', 'ed', 'edly', 'ing', 'ingly']);
  if (s === undefined) return w;
  if (s === 'eed' || s === 'eedly') return w.length - s.length >= r1 ? w.slice(0, -s.length) + 'ee' : w;
  const stem = w.slice(0, -s.length);
  if (![...stem].some(isVowel)) return w;
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return stem + 'e';
  if (DOUBLES.has(stem.slice(-2))) return stem.slice(0, -1);
  if (isShort(stem)) return stem + 'e';
  return stem;
}

function endsInShortSyllable(w: string): boolean {
  const n = w.length;
  if (n === 2) return isVowel(w[0]) && !isVowel(w[1]);
  if (n < 3) return false;
  const [a, b, c] = [w[n - 3]!, w[n - 2]!, w[n - 1]!];
  return !isVowel(a) && isVowel(b) && !isVowel(c) && c !== 'w' && c !== 'x' && c !== 'Y';
}

function isShort(w: string): boolean {
  return regionOne(w) >= w.length && endsInShortSyllable(w);
}

function step1c(w: string): string {
  const last = w[w.length - 1];
  if ((last === 'y' || last === 'Y') && w.length > 2 && !isVowel(w[w.length - 2])) return w.slice(0, -1) + 'i';
  return w;
}

function step2(w: string, r1: number): string {
  const found = longest(w, STEP2.map(([s]) => s));
  if (found === undefined || w.length - found.length < r1) return w;
  const stem = w.slice(0, -found.length);
  if (found === 'ogi' && !stem.endsWith('l')) return w;
  if (found === 'li' && !LI_ENDINGS.has(stem[stem.length - 1] ?? '')) return w;
  return stem + STEP2.find(([s]) => s === found)![1];
}

function step3(w: string, r1: number, r2: number): string {
  const found = longest(w, STEP3.map(([s]) => s));
  if (found === undefined || w.length - found.length < r1) return w;
  if (found === 'ative' && w.length - found.length < r2) return w;
  return w.slice(0, -found.length) + STEP3.find(([s]) => s === found)![1];
}

function step4(w: string, r2: number): string {
  const found = longest(w, STEP4);
  if (found === undefined || w.length - found.length < r2) return w;
  const stem = w.slice(0, -found.length);
  if (found === 'ion' && !stem.endsWith('s') && !stem.endsWith('t')) return w;
  return stem;
}

function step5(w: string, r1: number, r2: number): string {
  const last = w[w.length - 1];
  const at = w.length - 1;
  if (last === 'e') {
    const stem = w.slice(0, -1);
    if (at >= r2 || (at >= r1 && !endsInShortSyllable(stem))) return stem;
    return w;
  }
  if (last === 'l' && at >= r2 && w[at - 1] === 'l') return w.slice(0, -1);
  return w;
}
