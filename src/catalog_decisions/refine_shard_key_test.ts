import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey } from 'bson';
import { checkRefineShardKey, extendBound, isAlreadyRefined } from './refine_shard_key.js';

const ID_INDEX = { v: 2, key: { _id: 1 }, name: '_id_' };

function refusal(fn: () => unknown): [number, string] | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    const e = err as { code: number; message: string };
    return [e.code, e.message];
  }
}

test('a key that is already the new one needs nothing', () => {
  assert.equal(isAlreadyRefined({ a: 1, b: 'hashed' }, { a: 1, b: 'hashed' }), true);
  assert.equal(isAlreadyRefined({ a: 1 }, { a: 1, b: 1 }), false);
});

test('the new key must extend the current one, field by field and kind by kind', () => {
  const msg = (key: string): [number, string] => [72, `refineCollectionShardKey shard key ${key} does not extend the current shard key { _id: 1, aKey: 1 }`];
  const check = (newKey: Record<string, unknown>): [number, string] | undefined => refusal(() => checkRefineShardKey({ ns: 'db.c', currentKey: { _id: 1, aKey: 1 }, newKey, unique: false, indexes: [{ key: newKey, name: 'x' }] }));
  assert.deepEqual(check({ aKey: 1 }), msg('{ aKey: 1 }'));
  assert.deepEqual(check({ aKey: 1, _id: 1 }), msg('{ aKey: 1, _id: 1 }'));
  assert.deepEqual(check({ _id: 1, aKey: 'hashed', b: 1 }), msg("{ _id: 1, aKey: \"hashed\", b: 1 }"));
  assert.equal(check({ _id: 1, aKey: 1, b: 1 }), undefined);
});

test('an index that starts with the new key must exist, plain and, for a unique key, exact', () => {
  const base = { ns: 'db.c', currentKey: { a: 1 }, newKey: { a: 1, b: 1 }, unique: false };
  assert.equal(refusal(() => checkRefineShardKey({ ...base, indexes: [ID_INDEX] }))?.[0], 72);
  const sparse = refusal(() => checkRefineShardKey({ ...base, indexes: [ID_INDEX, { key: { a: 1, b: 1 }, name: 'a_1_b_1', sparse: true }] }));
  assert.ok(sparse?.[1].includes('Index key is sparse.'), sparse?.[1]);
  assert.equal(refusal(() => checkRefineShardKey({ ...base, indexes: [ID_INDEX, { key: { a: 1, b: 1, c: 1 }, name: 'abc' }] })), undefined);
  assert.equal(refusal(() => checkRefineShardKey({ ...base, unique: true, indexes: [ID_INDEX, { key: { a: 1, b: 1, c: 1 }, name: 'abc' }] }))?.[0], 72);
});

test('bounds gain MinKey for the new fields, or MaxKey after a MaxKey', () => {
  const newKey = { a: 1, b: 1, c: 1, d: 1 };
  assert.deepEqual(extendBound({ a: new MinKey(), b: new MinKey() }, newKey), { a: new MinKey(), b: new MinKey(), c: new MinKey(), d: new MinKey() });
  assert.deepEqual(extendBound({ a: 5, b: 5 }, newKey), { a: 5, b: 5, c: new MinKey(), d: new MinKey() });
  assert.deepEqual(extendBound({ a: new MaxKey(), b: new MaxKey() }, newKey), { a: new MaxKey(), b: new MaxKey(), c: new MaxKey(), d: new MaxKey() });
  assert.deepEqual(extendBound({ a: 5, b: new MaxKey() }, newKey), { a: 5, b: new MaxKey(), c: new MaxKey(), d: new MaxKey() });
  assert.deepEqual(extendBound({ a: 5, b: 5, c: 1, d: 2 }, newKey), { a: 5, b: 5, c: 1, d: 2 }, 'a bound already complete is left alone');
});
