import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { checkOperationSessionInfo, noTransactionToEnd } from './operation_session_info.js';

const lsid = { id: 'a session' };

function refusal(cmd: Record<string, unknown>, transactions = false): { code: number; message: string } | undefined {
  try {
    checkOperationSessionInfo(cmd, transactions);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof MongoError);
    return { code: err.code, message: err.message };
  }
}

describe('checkOperationSessionInfo', () => {
  it('lets plain commands, sessions and retryable writes through', () => {
    assert.equal(refusal({ insert: 'c' }), undefined);
    assert.equal(refusal({ insert: 'c', lsid }), undefined);
    assert.equal(refusal({ insert: 'c', lsid, txnNumber: Long.fromNumber(3) }), undefined);
  });

  it('without transactions, refuses every statement of one, the first and the later ones, as a standalone mongod does', () => {
    const illegal = { code: 20, message: 'Transaction numbers are only allowed on a replica set member or mongos' };
    assert.deepEqual(refusal({ insert: 'c', lsid, txnNumber: Long.fromNumber(1), autocommit: false, startTransaction: true }), illegal);
    assert.deepEqual(refusal({ find: 'c', lsid, txnNumber: Long.fromNumber(1), autocommit: false }), illegal);
    assert.deepEqual(refusal({ commitTransaction: 1, lsid, txnNumber: Long.fromNumber(1), autocommit: false }), illegal);
  });

  it('with transactions, lets their statements through', () => {
    assert.equal(refusal({ insert: 'c', lsid, txnNumber: Long.fromNumber(1), autocommit: false, startTransaction: true }, true), undefined);
    assert.equal(refusal({ commitTransaction: 1, lsid, txnNumber: Long.fromNumber(1), autocommit: false }, true), undefined);
  });

  it('checks the session fields in MongoDB\'s order and words', () => {
    assert.deepEqual(refusal({ insert: 'c', txnNumber: 1 }), { code: 72, message: 'Transaction number requires a session ID to also be specified' });
    assert.deepEqual(refusal({ insert: 'c', lsid, txnNumber: -1 }), { code: 72, message: 'Transaction number cannot be negative' });
    assert.deepEqual(refusal({ insert: 'c', lsid, autocommit: false }), { code: 72, message: "'autocommit' field requires a transaction number to also be specified" });
    assert.deepEqual(refusal({ insert: 'c', lsid, txnNumber: 1, autocommit: true }), { code: 72, message: 'Specifying autocommit=true is not allowed.' });
    assert.deepEqual(refusal({ insert: 'c', lsid, txnNumber: 1, startTransaction: true }), { code: 72, message: "'startTransaction' field requires 'autocommit' field to also be specified" });
    assert.deepEqual(refusal({ insert: 'c', lsid, txnNumber: 1, autocommit: false, startTransaction: false }), { code: 72, message: 'Specifying startTransaction=false is not allowed.' });
  });

  it('answers commit and abort outside a transaction with CommandFailed', () => {
    const err = noTransactionToEnd('abortTransaction');
    assert.equal(err.code, 125);
    assert.equal(err.codeName, 'CommandFailed');
    assert.equal(err.message, 'abortTransaction must be run within a transaction');
  });
});
