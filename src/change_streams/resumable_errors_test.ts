import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import { withResumableLabel } from './resumable_errors.js';

test('resumable codes gain ResumableChangeStreamError; fatal ones and other errors do not', () => {
  for (const code of [6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 150, 234, 133]) {
    assert.deepEqual((withResumableLabel(new MongoError(code, 'x')) as MongoError).errorLabels, ['ResumableChangeStreamError'], String(code));
  }
  for (const code of [280, 286, 2, 43]) assert.deepEqual((withResumableLabel(new MongoError(code, 'x')) as MongoError).errorLabels, [], String(code));
  const plain = new Error('x');
  assert.equal(withResumableLabel(plain), plain);
  assert.deepEqual((withResumableLabel(new MongoError(6, 'x', {}, ['ResumableChangeStreamError'])) as MongoError).errorLabels, ['ResumableChangeStreamError']);
});
