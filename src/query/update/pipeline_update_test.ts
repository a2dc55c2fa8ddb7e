import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCodes } from '../../base/error_codes.js';
import { assertMongoError, run } from './update_test_support.js';

describe('pipeline updates', () => {
  it('runs $set stages over the document', () => {
    const { doc, modified } = run({ _id: 1, a: 1 }, [{ $set: { b: 2 } }]);
    assert.deepStrictEqual(doc, { _id: 1, a: 1, b: 2 });
    assert.equal(modified, true);
  });

  it('reports no modification when the output equals the input', () => {
    assert.equal(run({ _id: 1, a: 1 }, [{ $set: { a: 1 } }]).modified, false);
  });

  it('keeps the _id that a stage drops', () => {
    assert.deepStrictEqual(run({ _id: 1, a: 1 }, [{ $replaceWith: { b: 1 } }]).doc, { _id: 1, b: 1 });
  });

  it('rejects a stage that changes the _id', () => {
    assertMongoError(() => run({ _id: 1 }, [{ $set: { _id: 2 } }]), ErrorCodes.ImmutableField);
  });
});
