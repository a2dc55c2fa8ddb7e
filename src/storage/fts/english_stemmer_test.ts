import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stemEnglish } from './english_stemmer.js';

// Pairs from the Snowball project's English vocabulary and its output, and the words of MongoDB's
// manual examples.
const PAIRS: [string, string][] = [
  ['consign', 'consign'], ['consigned', 'consign'], ['consigning', 'consign'], ['consignment', 'consign'],
  ['consistency', 'consist'], ['consistently', 'consist'], ['consolation', 'consol'], ['consolatory', 'consolatori'],
  ['consolidated', 'consolid'], ['consolingly', 'consol'], ['consonant', 'conson'], ['conspicuously', 'conspicu'],
  ['conspiracy', 'conspiraci'], ['conspirators', 'conspir'], ['constable', 'constabl'], ['constancy', 'constanc'],
  ['knackeries', 'knackeri'], ['knavish', 'knavish'], ['kneaded', 'knead'], ['kneeling', 'kneel'], ['knees', 'knee'],
  ['knightly', 'knight'], ['knitting', 'knit'], ['knives', 'knive'], ['knockers', 'knocker'],
  ['generously', 'generous'], ['running', 'run'], ['happily', 'happili'], ['cries', 'cri'], ['ties', 'tie'],
  ['skies', 'sky'], ['dying', 'die'], ['news', 'news'], ['succeeding', 'succeed'], ['caresses', 'caress'], ['ponies', 'poni'],
  ['gas', 'gas'], ['gaps', 'gap'], ['kiwis', 'kiwi'], ['cry', 'cri'], ['by', 'by'], ['say', 'say'], ['hopping', 'hop'],
  ['coffee', 'coffe'], ['shopping', 'shop'], ['shop', 'shop'], ['cakes', 'cake'], ['baking', 'bake'], ['bake', 'bake'],
  ['clothing', 'cloth'], ['clothes', 'cloth'], ['hamburgers', 'hamburg'], ['goods', 'good'], ['leche', 'lech'], ['leches', 'lech'],
  ["dog's", 'dog'], ['youth', 'youth'], ['yelling', 'yell'],
];

test('English words stem as the Snowball English stemmer stems them', () => {
  const wrong = PAIRS.filter(([word, stem]) => stemEnglish(word) !== stem).map(([word, stem]) => `${word}: ${stemEnglish(word)} (want ${stem})`);
  assert.deepEqual(wrong, []);
});
