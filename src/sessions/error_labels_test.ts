import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, UUID } from 'bson';
import { errorLabelsFor } from './error_labels.js';

const retryable = { lsid: { id: new UUID() }, txnNumber: Long.fromNumber(1) };

test('a retryable write that failed with a retriable error is labelled for the driver to retry', () => {
  assert.deepEqual(errorLabelsFor('insert', { insert: 'c', ...retryable }, 91, undefined, false), ['RetryableWriteError', 'NoWritesPerformed']);
  assert.deepEqual(errorLabelsFor('update', { update: 'c', ...retryable }, 6, undefined, true), ['RetryableWriteError']);
  assert.deepEqual(errorLabelsFor('delete', { delete: 'c', ...retryable }, undefined, 11600, true), ['RetryableWriteError'], 'a retriable writeConcernError counts too');
});

test('no label for other errors, other commands, writes without a txnNumber, or statements of a transaction', () => {
  assert.deepEqual(errorLabelsFor('insert', { insert: 'c', ...retryable }, 11000, undefined, false), []);
  assert.deepEqual(errorLabelsFor('find', { find: 'c', ...retryable }, 91, undefined, false), []);
  assert.deepEqual(errorLabelsFor('insert', { insert: 'c', lsid: retryable.lsid }, 91, undefined, false), []);
  assert.deepEqual(errorLabelsFor('insert', { insert: 'c', ...retryable, autocommit: false }, 91, undefined, false), ['TransientTransactionError'], 'a statement of a transaction gets no RetryableWriteError');
});

test("a transaction's labels, as error_labels.cpp gives them", () => {
  const txn = { ...retryable, autocommit: false };
  assert.deepEqual(errorLabelsFor('update', { update: 'c', ...txn }, 112, undefined, false), ['TransientTransactionError'], 'WriteConflict');
  assert.deepEqual(errorLabelsFor('find', { find: 'c', ...txn }, 251, undefined, false), ['TransientTransactionError'], 'NoSuchTransaction');
  assert.deepEqual(errorLabelsFor('find', { find: 'c', ...txn }, 239, undefined, false), ['TransientTransactionError'], 'SnapshotTooOld');
  assert.deepEqual(errorLabelsFor('insert', { insert: 'c', ...txn }, 11000, undefined, false), [], 'a duplicate key is for the application');
  assert.deepEqual(errorLabelsFor('commitTransaction', { commitTransaction: 1, ...txn }, 91, undefined, false), ['RetryableWriteError', 'UnknownTransactionCommitResult']);
  assert.deepEqual(errorLabelsFor('commitTransaction', { commitTransaction: 1, ...txn }, 50, undefined, false), ['UnknownTransactionCommitResult'], 'MaxTimeMSExpired');
  assert.deepEqual(errorLabelsFor('commitTransaction', { commitTransaction: 1, ...txn }, 251, 64, false), ['UnknownTransactionCommitResult'], 'NoSuchTransaction with a write concern error may have committed');
  assert.deepEqual(errorLabelsFor('abortTransaction', { abortTransaction: 1, ...txn }, 91, undefined, false), ['RetryableWriteError']);
  assert.deepEqual(errorLabelsFor('insert', { insert: 'c', ...txn }, 91, undefined, false), ['TransientTransactionError'], "a statement's retriable error");
  assert.deepEqual(errorLabelsFor('commitTransaction', { commitTransaction: 1, ...txn }, undefined, 100, false), [], 'UnsatisfiableWriteConcern');
  assert.deepEqual(errorLabelsFor('commitTransaction', { commitTransaction: 1, ...txn }, undefined, 64, false), ['UnknownTransactionCommitResult'], 'WriteConcernFailed');
});
