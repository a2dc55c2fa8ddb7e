import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Decimal128, Double, Long } from 'bson';
import { expireAfterSecondsProblem, expireAfterSecondsRangeProblem, ttlSpecProblem, wholeSeconds } from './ttl_index.js';

describe('TTL index rules', () => {
  it('take any number from 0 to 2147483647, read as whole seconds', () => {
    for (const ok of [0, 1, 3600, 2147483647, new Double(1.5), Long.fromNumber(60), Decimal128.fromString('10'), new Double(-0.5)]) {
      assert.equal(expireAfterSecondsProblem(ok), undefined, String(ok));
    }
    assert.equal(wholeSeconds(new Double(1.9)), 1);
    assert.equal(wholeSeconds(new Double(-0.5)), 0, 'truncated towards zero, as safeNumberLong does');
  });

  it('refuse a value that is not a number, NaN, beyond 32 bits or negative', () => {
    assert.match(expireAfterSecondsProblem('10')!, /must be numeric, but received a type of 'string'/);
    assert.match(expireAfterSecondsProblem(null)!, /type of 'null'/);
    assert.match(expireAfterSecondsProblem(new Double(NaN))!, /must not be NaN/);
    assert.match(expireAfterSecondsProblem(2147483648)!, /range of a 32-bit integer/);
    assert.match(expireAfterSecondsProblem(Long.fromString('9223372036854775807'))!, /range of a 32-bit integer/);
    assert.match(expireAfterSecondsProblem(new Double(Infinity))!, /range of a 32-bit integer/);
    assert.match(expireAfterSecondsProblem(-1)!, /cannot be less than 0/);
    assert.match(expireAfterSecondsRangeProblem(2147483648)!, /acceptable range/);
  });

  it('make a TTL index a single-field index', () => {
    assert.equal(ttlSpecProblem({ key: { a: 1, b: 1 }, name: 'a_1_b_1' }), undefined, 'not a TTL index at all');
    assert.equal(ttlSpecProblem({ key: { at: -1 }, name: 'at_-1', expireAfterSeconds: 5 }), undefined);
    assert.match(ttlSpecProblem({ key: { a: 1, b: 1 }, name: 'a_1_b_1', expireAfterSeconds: 5 })!, /single-field indexes/);
    assert.match(ttlSpecProblem({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: -5 })!, /less than 0/);
  });
});
