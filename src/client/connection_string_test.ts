import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import { isSetConnectionString, parseConnectionString } from './connection_string.js';

test('a set string gives its name and seeds, a plain host itself', () => {
  assert.deepEqual(parseConnectionString('rs0/a:1,b:2,c:3'), { setName: 'rs0', hosts: ['a:1', 'b:2', 'c:3'] });
  assert.deepEqual(parseConnectionString('127.0.0.1:27018'), { hosts: ['127.0.0.1:27018'] });
  assert.deepEqual(parseConnectionString('cfg/a:1,a:1'), { setName: 'cfg', hosts: ['a:1'] });
  assert.ok(isSetConnectionString('rs0/a:1'));
  assert.ok(!isSetConnectionString('a:1'));
});

test('a malformed string is FailedToParse', () => {
  for (const bad of ['/a:1', 'rs0/', 'rs0/a:1,,b:2', 'rs0/a', 'rs0/a:0', 'a:1,b:2', 'rs0/a:1/b:2']) {
    assert.throws(() => parseConnectionString(bad), (err: unknown) => err instanceof MongoError && err.codeName === 'FailedToParse', bad);
  }
});
