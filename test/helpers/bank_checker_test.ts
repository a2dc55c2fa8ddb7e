import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkBank, type Account } from './bank_checker.js';

const balances = (...values: number[]): Map<Account, number> => new Map(values.map((v, i) => [i, v]));

test('reads that sum to the total and final balances that follow the transfers pass', () => {
  const transfers = [{ from: 0, to: 1, amount: 30 }, { from: 2, to: 0, amount: 5 }];
  assert.deepEqual(checkBank(balances(100, 100, 100), transfers, [balances(100, 100, 100), balances(70, 130, 100), balances(75, 130, 95)], balances(75, 130, 95)), { badReads: [], badFinal: [] });
});

test('a read that saw half a transfer, or missed an account, is reported with its position', () => {
  const reads = [balances(100, 100), balances(70, 100), new Map<Account, number>([[0, 200]])];
  const { badReads } = checkBank(balances(100, 100), [], reads, balances(100, 100));
  assert.deepEqual(badReads.map(({ index, total, missing }) => ({ index, total, missing })), [{ index: 1, total: 170, missing: [] }, { index: 2, total: 200, missing: [1] }]);
});

test('final balances that differ from the committed transfers are reported by account', () => {
  const { badFinal } = checkBank(balances(100, 100), [{ from: 0, to: 1, amount: 10 }], [], balances(100, 100));
  assert.deepEqual(badFinal, [{ account: 0, expected: 90, actual: 100 }, { account: 1, expected: 110, actual: 100 }]);
});

test('a transfer between unknown accounts is refused as a malformed log', () => {
  assert.throws(() => checkBank(balances(100), [{ from: 0, to: 9, amount: 1 }], [], balances(100)), /unknown accounts/);
});
