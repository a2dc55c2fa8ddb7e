import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyFileError, parseKeyFile } from './key_file.js';

const file = (text: string): Buffer => Buffer.from(text, 'latin1');

test('a key file: whitespace anywhere is dropped, base64 characters kept', () => {
  assert.equal(parseKeyFile('/k', file(' abc+/\n\tDEF=\r\n 123\v\f'), 0o100600), 'abc+/DEF=123');
  assert.equal(parseKeyFile('/k', file('abcdef'), 0o100400), 'abcdef');
  assert.equal(parseKeyFile('/k', file('a'.repeat(1024)), 0o100600).length, 1024);
});

test('a key file: any group or other permission bit is refused before the contents are read', () => {
  for (const mode of [0o100640, 0o100604, 0o100610, 0o100601, 0o100644, 0o100700 | 0o020]) {
    assert.throws(() => parseKeyFile('/etc/k', file('abcdefgh'), mode), new KeyFileError('permissions on /etc/k are too open'));
  }
});

test('a key file: a character outside base64 is named, the length must be 6 to 1024', () => {
  assert.throws(() => parseKeyFile('/k', file('abc-defg'), 0o600), new KeyFileError('invalid char in key file /k: -'));
  assert.throws(() => parseKeyFile('/k', file('abcdefg\x00'), 0o600), new KeyFileError('invalid char in key file /k: \\x00'));
  assert.throws(() => parseKeyFile('/k', file('abcdé'), 0o600), /invalid char in key file \/k: \\xe9/);
  assert.throws(() => parseKeyFile('/k', file('ab cd e\n'), 0o600), new KeyFileError('security key in /k has length 5, must be between 6 and 1024 chars'));
  assert.throws(() => parseKeyFile('/k', file(''), 0o600), /has length 0/);
  assert.throws(() => parseKeyFile('/k', file('a'.repeat(1025)), 0o600), /has length 1025/);
});
