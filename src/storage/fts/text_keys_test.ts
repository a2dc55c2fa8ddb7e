import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requireLanguage, textLanguage } from './languages.js';
import { splitWords, textTerms } from './tokenizer.js';
import { normalizeTextIndexSpec, textIndexSpec } from './text_index_spec.js';
import { indexTerm, termScores, textIndexKeys } from './text_keys.js';

const english = textLanguage('english')!;
const none = textLanguage('none')!;

test('words are split at white space, punctuation and symbols; English keeps apostrophes, other languages do not', () => {
  assert.deepEqual(splitWords("Don't stop-believing: snake_case, 3.14 & café!", english), ["Don't", 'stop', 'believing', 'snake_case', '3', '14', 'café']);
  assert.deepEqual(splitWords("Don't", none), ['Don', 't']);
});

test('terms are folded, stop words left out and the rest stemmed; none keeps every word as folded', () => {
  assert.deepEqual(textTerms('The Coffee and the Cakes', english), ['coffe', 'cake']);
  assert.deepEqual(textTerms("We've been shopping, haven't we?", english), ['shop']);
  assert.deepEqual(textTerms('Café CRÈME', english), ['cafe', 'creme']);
  assert.deepEqual(textTerms('Café', english, { diacriticSensitive: true }), ['café']);
  assert.deepEqual(textTerms('Coffee Shopping', english, { caseSensitive: true }), ['Coffe', 'Shop']);
  assert.deepEqual(textTerms('the running dogs', none), ['the', 'running', 'dogs']);
});

test('languages: MongoDB\'s fifteen by name and code, with Snowball stemmers and stop words; others are refused with BadValue', () => {
  assert.equal(requireLanguage('en').name, 'english');
  assert.equal(requireLanguage('nb').name, 'norwegian');
  assert.equal(requireLanguage('Spanish').name, 'spanish');
  assert.deepEqual(textTerms('Les maisons continuellement', requireLanguage('french')), ['maison', 'continuel']);
  assert.deepEqual(textTerms('Die Häuser und die Gärten', requireLanguage('de')), ['haus', 'gart']);
  assert.deepEqual(textTerms("l'amour", requireLanguage('french')), ['amour'], 'only English keeps apostrophes in words: l is a word, and a stop word');
  assert.throws(() => requireLanguage('klingon'), { code: 2, message: /unsupported language: "klingon"/ });
  assert.throws(() => requireLanguage('porter'), { code: 2 }, 'a Snowball algorithm MongoDB does not name');
});

test('a spec is normalised as MongoDB lists it, whether written with text fields or already normalised', () => {
  const spec = normalizeTextIndexSpec({ v: 2, key: { a: 1, title: 'text', body: 'text', z: -1 }, name: 'x', weights: { title: 10 } });
  assert.deepEqual(spec, {
    v: 2, key: { a: 1, _fts: 'text', _ftsx: 1, z: -1 }, name: 'x', weights: { body: 1, title: 10 },
    default_language: 'english', language_override: 'language', textIndexVersion: 3,
  });
  assert.deepEqual(normalizeTextIndexSpec(spec), spec);
  assert.throws(() => normalizeTextIndexSpec({ key: { t: 'text' }, name: 'x', weights: { t: 0 } }), { code: 67 });
  assert.throws(() => normalizeTextIndexSpec({ key: { t: 'text' }, name: 'x', default_language: 'xx' }), { code: 2 });
});

// The score of a term in one string is freq * (0.5 + 0.5 * count / terms): repeats add 1, 1/2,
// 1/4..., and the field weight multiplies it.
test("scores follow MongoDB's formula: repeats count less, a larger share of a string counts more, weights multiply", () => {
  const spec = textIndexSpec(normalizeTextIndexSpec({ key: { title: 'text', body: 'text' }, name: 'x', weights: { title: 3 } }));
  const scores = termScores({ title: 'cake', body: 'Baking a cake, cake and more cake' }, spec);
  // title: one term of one: 1 * (0.5 + 0.5) * 3 = 3. body: bake, cake x3 (a, and, more are stop
  // words): cake freq 1 + 1/2 + 1/4 = 1.75, coefficient 0.5 + 0.5 * 3/4 = 0.875.
  assert.equal(scores.get('cake'), 3 + 1.75 * 0.875);
  assert.equal(scores.get('bake'), 1 * (0.5 + 0.5 * 1 / 4));
  assert.equal(scores.has('a'), false);
});

test("a document's language override decides its stemming; the wildcard index reads every string", () => {
  const spec = textIndexSpec(normalizeTextIndexSpec({ key: { '$**': 'text' }, name: 'x' }));
  assert.equal(spec.wildcard, true);
  assert.deepEqual([...termScores({ a: 'running', b: { c: ['dogs'] }, n: 5 }, spec).keys()].sort(), ['dog', 'run']);
  assert.deepEqual([...termScores({ a: 'running', language: 'none' }, spec).keys()].sort(), ['running']);
  assert.throws(() => termScores({ a: 'x', language: 'xx' }, spec), { code: 17262, message: 'language override unsupported: xx' });
  assert.deepEqual([...termScores({ a: 'running', b: { language: 'none', c: ['dogs'] } }, spec).keys()].sort(), ['dogs', 'run'], 'an embedded document names the language of its own strings');
  assert.deepEqual([...termScores({ language: 'none', b: [{ language: 'en', c: 'dogs' }, { c: 'cats' }] }, spec).keys()].sort(), ['cats', 'dog'], 'one array element\'s language is its own');
  assert.throws(() => termScores({ a: 'x', b: { language: 'xx', c: 'y' } }, spec), { code: 17262 });
  assert.throws(() => termScores({ a: 'x', language: 5 }, spec), { code: 17261 });
});

test('keys hold the prefix, the term, its score and the suffix; a long term keeps its start and a hash', () => {
  const spec = textIndexSpec(normalizeTextIndexSpec({ key: { shop: 1, t: 'text', n: 1 }, name: 'x' }));
  const { keys } = textIndexKeys({ shop: 'a', t: 'coffee coffee', n: 7 }, spec, [1, 1, 1, 1]);
  assert.deepEqual(keys, [['a', 'coffe', 1.5, 7]]);
  const long = 'x'.repeat(100);
  assert.equal(indexTerm(long).length, 64);
  assert.equal(indexTerm(long).slice(0, 32), long.slice(0, 32));
  assert.throws(() => textIndexKeys({ shop: ['a', 'b'], t: 'x' }, spec, [1, 1, 1, 1]), { code: 16675 });
});
