import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newStemmer } from 'snowball-stemmers';
import { stemEnglish } from './english_stemmer.js';

// Our Porter2 stemmer against the Snowball project's own algorithm (the npm port MongoDB's
// libstemmer is compiled from the same source of): every distinct word of this repository's
// documents, several thousand real English words and identifiers, must stem alike.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function wordsOfDocs(): string[] {
  const files = [path.join(ROOT, 'README.md'), ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(ROOT, 'docs', f))];
  const words = new Set<string>();
  for (const f of files) for (const w of readFileSync(f, 'utf8').toLowerCase().match(/[a-z']+/g) ?? []) words.add(w.replace(/^'+|'+$/g, ''));
  words.delete('');
  return [...words];
}

test('the English stemmer stems every word of the documentation as Snowball does', () => {
  const snowball = newStemmer('english');
  const words = wordsOfDocs();
  assert.ok(words.length > 2000, `only ${words.length} words`);
  const differing = words.filter((w) => stemEnglish(w) !== snowball.stem(w)).map((w) => `${w}: ${stemEnglish(w)} vs ${snowball.stem(w)}`);
  assert.deepEqual(differing, []);
});

test('and random words built of English suffixes and letters stem alike too', () => {
  const snowball = newStemmer('english');
  const suffixes = ['', 's', 'es', 'ed', 'ing', 'ly', 'ness', 'ational', 'tional', 'izer', 'ization', 'fulness', 'ousli', 'iveness', 'ement', 'ment', 'ent', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'ion', 'al', 'er', 'ic', 'able', 'ible', 'ant', 'ence', 'ance', 'eed', 'eedly', 'ingly', 'y', "'s", "s'"];
  let seed = 20261206;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const letters = 'abcdefghijklmnopqrstuvwxyzaeiouy';
  const differing: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    let w = '';
    for (let k = 2 + next(7); k > 0; k--) w += letters[next(letters.length)];
    w += suffixes[next(suffixes.length)];
    if (stemEnglish(w) !== snowball.stem(w)) differing.push(`${w}: ${stemEnglish(w)} vs ${snowball.stem(w)}`);
  }
  assert.deepEqual(differing.slice(0, 20), []);
});
