import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileRegex } from './regex.js';

const cases: [pattern: string, flags: string, subject: string, expected: boolean][] = [
  ['a{', '', 'a{', true],
  ['a{2}', '', 'aa', true],
  ['x}', '', 'x}', true],
  ['\\Qa.b\\E', '', 'a.b', true],
  ['\\Qa.b\\E', '', 'axb', false],
  ['[ a]', 'x', ' ', true],
  ['a #c\n b', 'x', 'ab', true],
  ['^b$', 'm', 'a\nb\nc', true],
  ['^b$', '', 'a\nb\nc', false],
  ['a$', 'm', 'a\n', true],
  ['\\Z', '', 'a\n', true],
  ['(?P<n>a)(?P=n)', '', 'aa', true],
  ['\\x{263a}', '', '☺', true],
  ['[^]]', '', ']', false],
  ['\\s', '', '\u00a0', false],
  ['a.c', '', 'a\rc', true],
];

test('PCRE patterns translate to equivalent JavaScript regular expressions', () => {
  for (const [pattern, flags, subject, expected] of cases) {
    assert.equal(compileRegex(pattern, flags).test(subject), expected, `/${pattern}/${flags} on ${JSON.stringify(subject)}`);
  }
});

test('invalid flags and patterns are rejected with MongoDB codes', () => {
  assert.throws(() => compileRegex('a', 'g'), { code: 51108 });
  assert.throws(() => compileRegex('(', ''), { code: 51091 });
  assert.throws(() => compileRegex('a\0', ''), { code: 2 });
});
