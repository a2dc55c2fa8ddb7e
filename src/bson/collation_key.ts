import { isPlainObject } from './values.js';

// What an index under a collation stores for a string: a string that is the same for two strings
// exactly when the collation finds them equal, so that equality, an index's point bounds and its
// unique constraint follow the collation. MongoDB stores ICU's sort key, which also orders as the
// collation does; Node offers no sort keys (Intl.Collator only compares), so this key is a
// canonical form built from Unicode normalization and case mapping, checked against Intl.Collator
// (collation_key_test.ts). It orders by code points, not by the collation: string ranges on such
// an index cannot be bounded by it, only point bounds.

export interface CollationKeyOptions {
  strength: number;
  caseLevel: boolean;
  numericOrdering: boolean;
  alternate: string;
}

// Characters ICU ignores completely (controls and format characters), but for the controls that
// are whitespace, which weigh as spaces.
const IGNORABLE = /[\p{Cc}\p{Cf}]/gu;
const WHITESPACE_CONTROLS = '\t\n\v\f\r\u0085';
const MARKS = /\p{M}/gu;
// Letters ICU weighs as a base letter plus a secondary difference, or as two letters, though
// Unicode does not decompose them: equal to those at strength 1.
const PRIMARY_FOLDS: Record<string, string> = {
  Đ: 'D', đ: 'd', Ð: 'D', ð: 'd', Ħ: 'H', ħ: 'h', Ł: 'L', ł: 'l', Ŀ: 'L', ŀ: 'l', Ø: 'O', ø: 'o', Ǿ: 'O', ǿ: 'o',
  Æ: 'AE', æ: 'ae', Œ: 'OE', œ: 'oe', ß: 'ss', ẞ: 'SS',
};
const PRIMARY_FOLD = new RegExp(`[${Object.keys(PRIMARY_FOLDS).join('')}]`, 'gu');
// Differences ICU keeps at strength 2 that compatibility decomposition or lower-casing would erase
// (the long s), or lower-casing leaves (the final sigma, a tertiary difference).
const LONG_S = /\u017f/gu;
const LONG_S_STANDIN = '\ue000';
const L_DOT_STANDIN = '\ue001';

// Katakana and small kana differ from hiragana and full-size kana at the tertiary level only
// (small kana as a difference of case, which caseLevel keeps).
const SMALL_KANA: Record<string, string> = { ぁ: 'あ', ぃ: 'い', ぅ: 'う', ぇ: 'え', ぉ: 'お', っ: 'つ', ゃ: 'や', ゅ: 'ゆ', ょ: 'よ', ゎ: 'わ', ゕ: 'か', ゖ: 'け' };

function foldKana(t: string, small: boolean): string {
  const hiragana = t.replace(/[\u30a1-\u30f6]/gu, (c) => String.fromCharCode(c.charCodeAt(0) - 0x60));
  return small ? hiragana.replace(/[ぁぃぅぇぉっゃゅょゎゕゖ]/gu, (c) => SMALL_KANA[c]!) : hiragana;
}

export function collationKeyFunction(o: CollationKeyOptions): (s: string) => string {
  const foldCase = o.strength <= 2 && !o.caseLevel;
  // As the comparator (Intl.Collator's ignorePunctuation) takes alternate: 'shifted', whatever
  // maxVariable and strength say: spaces and punctuation ignored.
  const variable = o.alternate === 'shifted' ? /[\p{P}\p{Z}\t\n\v\f\r\u0085]/gu : undefined;
  return (s) => {
    let t = s.normalize('NFD');
    // Before compatibility decomposition, which would split Ŀ into L and a middle dot.
    if (o.strength === 1) t = t.replace(PRIMARY_FOLD, (c) => PRIMARY_FOLDS[c]!);
    // Ŀ decomposes to L and a middle dot, which shifted punctuation would then drop, where ICU
    // keeps Ŀ apart from L.
    else if (variable !== undefined) t = t.replace(/[Ŀŀ]/gu, (c) => (c === 'Ŀ' ? 'L' : 'l') + L_DOT_STANDIN);
    if (o.strength <= 2) t = compatibilityForms(t.replace(LONG_S, o.strength === 1 ? 's' : LONG_S_STANDIN), o.numericOrdering);
    t = t.replace(IGNORABLE, (c) => (WHITESPACE_CONTROLS.includes(c) ? c : ''));
    if (variable !== undefined) t = t.replace(variable, '');
    if (foldCase) t = compatibilityForms(t.toLowerCase(), o.numericOrdering);
    if (o.strength <= 2) t = foldKana(t.replace(/ς/gu, 'σ'), !o.caseLevel);
    if (o.strength === 1) t = t.replace(MARKS, '');
    if (o.numericOrdering) t = t.replace(/\d+/gu, (digits) => digits.replace(/^0+(?=\d)/u, ''));
    return t;
  };
}

// Compatibility forms are tertiary differences (ﬁ and fi, ｆ and f), so equal below strength 3;
// but under numericOrdering a number form that is not a decimal digit (²) is not the digit it
// decomposes to (2 counts as a number there, ² does not), so those are kept.
function compatibilityForms(t: string, numeric: boolean): string {
  if (!numeric) return t.normalize('NFKD');
  return t.split(/(\p{No})/u).map((part, i) => (i % 2 === 1 ? part : part.normalize('NFKD'))).join('');
}

// A value with every string in it (inside documents and arrays too) replaced by its key, as
// MongoDB builds the index keys of a collated index.
export function collateValue(v: unknown, key: (s: string) => string): unknown {
  if (typeof v === 'string') return key(v);
  if (Array.isArray(v)) return v.map((e) => collateValue(e, key));
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = collateValue(x, key);
    return out;
  }
  return v;
}

// Strings whose equality locales tailor: Latin letters with their accented and extended forms,
// ligatures, the Turkish i's, digraphs some locales weigh as one letter (Danish aa, Icelandic
// th, Spanish ch and ll, Dutch ij), and kana.
const PROBES: readonly string[] = (() => {
  const out: string[] = [];
  for (let c = 0x41; c <= 0x5a; c++) out.push(String.fromCharCode(c), String.fromCharCode(c + 0x20));
  for (let c = 0xc0; c <= 0x17f; c++) if (/\p{L}/u.test(String.fromCharCode(c))) out.push(String.fromCharCode(c));
  out.push('aa', 'Aa', 'ae', 'oe', 'ss', 'th', 'Th', 'ch', 'Ch', 'll', 'ij', 'IJ', 'dz', 'cs', 'ny', 'lj', 'nj', 'a\u0301', 'o\u0308', '²', '2', '02', 'ﬁ', 'fi', '-', ' ', 'σ', 'ς',
    'あ', 'ア', 'ぁ', 'ァ', 'か', 'が', 'カ', 'ｶ', 'っ', 'ッ', 'ー');
  return out;
})();

const faithful = new WeakMap<(a: string, b: string) => number, boolean>();

// Whether the collation keys of `key` are equal exactly where `compare` finds strings equal, on
// the probes: true for the root collation and locales without tailorings of these letters (en,
// fr, de, ...), false for those that tailor them (sv, da, tr, is, ...), whose indexes docshard
// cannot key faithfully.
export function collationKeyFaithful(compare: (a: string, b: string) => number, key: (s: string) => string): boolean {
  const known = faithful.get(compare);
  if (known !== undefined) return known;
  const keys = PROBES.map(key);
  let ok = true;
  for (let i = 0; i < PROBES.length && ok; i++) {
    for (let j = i + 1; j < PROBES.length; j++) {
      if ((compare(PROBES[i]!, PROBES[j]!) === 0) !== (keys[i] === keys[j])) {
        ok = false;
        break;
      }
    }
  }
  faithful.set(compare, ok);
  return ok;
}
