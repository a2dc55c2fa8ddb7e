import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collationKeyOf, indexableCollation, parseCollation } from './collation.js';

// The key stands for the collation: two strings have the same key exactly when Intl.Collator (the
// comparator queries use) finds them equal. Checked on every pair of short strings drawn from
// letters in both cases, accented, decomposed, ligatures, compatibility forms, ignorables, spaces,
// punctuation and digits.
const ALPHABET = [
  'a', 'A', 'á', 'Á', 'a\u0301', 'à', 'ä', 'e', 'E', 'é', 'i', 'I', 'ı', 'İ', 'o', 'O', 'ø', 'Ø', 'ö', 's', 'S', 'ſ', 'ß', 'ss', 'd', 'đ', 'Ð',
  'l', 'ł', 'ae', 'æ', 'Æ', 'ﬁ', 'fi', 'ｆ', '²', '2', '02', '0', 'σ', 'ς', 'Σ', 'ж', 'Ж', ' ', '-', '_', '.', '$', '\u0000', '\u200b', '\t',
  'あ', 'ア', 'ぁ', 'ァ', 'が', 'ｶ', 'Ŀ',
];

function strings(): string[] {
  const out = [...ALPHABET];
  for (const a of ALPHABET) for (const b of ['a', 'A', 'á', 's', 'ß', ' ', '-', '2', '02', 'ı']) out.push(a + b);
  return out;
}

function check(spec: Record<string, unknown>): void {
  const cmp = parseCollation(spec)!;
  const key = collationKeyOf(cmp);
  const all = strings();
  const wrong: string[] = [];
  for (const a of all) {
    for (const b of all) {
      if ((cmp(a, b) === 0) !== (key(a) === key(b))) wrong.push(`${JSON.stringify(a)} ${JSON.stringify(b)} compare ${cmp(a, b)}`);
    }
  }
  assert.deepEqual(wrong.slice(0, 10), [], `${JSON.stringify(spec)}: ${wrong.length} pairs disagree`);
}

describe('collation keys', () => {
  it('follow strength 1, 2 and 3 of the en locale', () => {
    check({ locale: 'en', strength: 1 });
    check({ locale: 'en', strength: 2 });
    check({ locale: 'en', strength: 3 });
  });

  it('follow caseLevel, numericOrdering and alternate: shifted', () => {
    check({ locale: 'en', strength: 1, caseLevel: true });
    check({ locale: 'en', strength: 2, numericOrdering: true });
    check({ locale: 'en', strength: 2, alternate: 'shifted' });
  });

  it('tell which collations an index can be keyed by: not those whose tailoring they do not follow', () => {
    for (const locale of ['en', 'fr', 'de', 'it', 'ru']) for (const strength of [1, 2, 3]) assert.ok(indexableCollation(parseCollation({ locale, strength })!), `${locale} ${strength}`);
    assert.equal(indexableCollation(parseCollation({ locale: 'sv', strength: 1 })!), false, "Swedish weighs 'ä' as a letter of its own");
    assert.equal(indexableCollation(parseCollation({ locale: 'tr', strength: 2 })!), false, "Turkish pairs 'I' with 'ı'");
    assert.equal(indexableCollation(parseCollation({ locale: 'da', strength: 2 })!), false, "Danish weighs 'aa' as 'å'");
  });

  it('are one comparator per collation, so an index and a query can be told to share one', () => {
    assert.equal(parseCollation({ locale: 'en', strength: 2 }), parseCollation({ strength: 2, locale: 'en', caseLevel: false }));
    assert.notEqual(parseCollation({ locale: 'en', strength: 2 }), parseCollation({ locale: 'en', strength: 1 }));
    assert.equal(collationKeyOf(parseCollation({ locale: 'en', strength: 2 })!)('Ada'), collationKeyOf(parseCollation({ locale: 'en', strength: 2 })!)('ada'));
  });
});
