import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeTextIndexSpec, textIndexSpec } from '../../storage/fts/text_index_spec.js';
import { textLanguage } from '../../storage/fts/languages.js';
import { extractText, parseTextQuery, passesTextFilter } from './text_query.js';

const spec = textIndexSpec(normalizeTextIndexSpec({ key: { t: 'text' }, name: 't_text' }));
const english = textLanguage('english')!;

test('$search: words are searched for, quoted text is a phrase whose words are searched for too, and a leading - negates', () => {
  const q = parseTextQuery({ $search: 'Java "coffee shop" -cakes -"tea room" the' }, spec);
  assert.deepEqual(q.indexTerms.sort(), ['coffe', 'java', 'shop']);
  assert.deepEqual(q.negatedTerms, ['cake']);
  assert.deepEqual(q.phrases, ['coffee shop']);
  assert.deepEqual(q.negatedPhrases, ['tea room']);
  assert.deepEqual(parseTextQuery({ $search: 'coffee-shop' }, spec).indexTerms.sort(), ['coffe', 'shop'], 'a dash inside a word parts it');
});

function inEnglish(...texts: string[]): { text: string; language: typeof english }[] {
  return texts.map((text) => ({ text, language: english }));
}

test('case- and diacritic-sensitive queries read the index folded but keep the terms as written', () => {
  const q = parseTextQuery({ $search: 'Café', $caseSensitive: true, $diacriticSensitive: true }, spec);
  assert.deepEqual(q.indexTerms, ['cafe']);
  assert.deepEqual(q.positiveTerms, ['Café']);
  assert.equal(passesTextFilter(q, inEnglish('Café Con Leche')), true);
  assert.equal(passesTextFilter(q, inEnglish('cafe con leche')), false);
});

test('negations and phrases decide on the document\'s strings', () => {
  const q = parseTextQuery({ $search: '"coffee shop" -cream' }, spec);
  assert.equal(passesTextFilter(q, inEnglish('Coffee Shopping')), true);
  assert.equal(passesTextFilter(q, inEnglish('coffee and cream')), false);
  assert.equal(passesTextFilter(q, inEnglish('coffee', 'shop')), false, 'a phrase is within one string');
});

test('bad $text arguments get BadValue; a second $text is too many', () => {
  assert.throws(() => parseTextQuery('x', spec), { code: 2 });
  assert.throws(() => parseTextQuery({}, spec), { code: 2 });
  assert.throws(() => parseTextQuery({ $search: 'x', $caseSensitive: 1 }, spec), { code: 2 });
  assert.throws(() => parseTextQuery({ $search: 'x', extra: 1 }, spec), { code: 2 });
  assert.throws(() => parseTextQuery({ $search: 'x', $language: 'xx' }, spec), { code: 2 });
  assert.deepEqual(extractText({ a: 1, $and: [{ $text: { $search: 'x' } }, { b: 2 }] }), { text: { $search: 'x' }, rest: { a: 1, $and: [{}, { b: 2 }] } });
  assert.throws(() => extractText({ $text: { $search: 'x' }, $and: [{ $text: { $search: 'y' } }] }), { code: 2, message: 'Too many text expressions' });
  assert.deepEqual(extractText({ c: 3, $or: [{ $text: { $search: 'x' }, b: 2 }, { a: 1 }] }), { text: { $search: 'x' }, rest: { c: 3 }, or: { textClause: { b: 2 }, others: [{ a: 1 }] } });
  assert.throws(() => extractText({ $nor: [{ $text: { $search: 'x' } }, { a: 1 }] }), { code: 2, message: 'text expression not allowed in nor' });
  assert.throws(() => extractText({ $and: [{ $nor: [{ a: 1 }, { $and: [{ $text: { $search: 'x' } }] }] }] }), { code: 2, message: 'text expression not allowed in nor' });
  assert.equal(extractText({ $nor: [{ a: 1 }] }), undefined);
  assert.equal(extractText({ $or: [{ a: 1 }, { b: 1 }] }), undefined);
});
