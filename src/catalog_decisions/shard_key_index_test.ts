import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { decideShardKeyIndex, shardKeyIndexSpec } from './shard_key_index.js';

const ID_INDEX = { v: 2, key: { _id: 1 }, name: '_id_' };

function decide(pattern: Doc, indexes: Doc[], opts: { unique?: boolean; empty?: boolean } = {}) {
  return decideShardKeyIndex({ ns: 'db.c', key: new ShardKeyPattern(pattern), unique: opts.unique ?? false, collectionIsEmpty: opts.empty ?? false, existingIndexes: [ID_INDEX, ...indexes] });
}

function invalidOptions(message: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === 72 && message.test(err.message);
}

test('an empty collection without a usable index gets the shard key index built', () => {
  assert.deepEqual(decide({ a: 1 }, [], { empty: true }), { key: { a: 1 }, name: 'a_1' });
  assert.deepEqual(decide({ a: 1, b: 'hashed' }, [], { empty: true }), { key: { a: 1, b: 'hashed' }, name: 'a_1_b_hashed' });
});

test('a non-empty collection without a usable index is refused with MongoDB message', () => {
  assert.throws(() => decide({ a: 1 }, []), invalidOptions(/^Please create an index that starts with the proposed shard key before sharding the collection\. /));
});

test('an index that starts with the shard key is usable, and nothing is built', () => {
  assert.equal(decide({ a: 1 }, [{ v: 2, key: { a: 1, b: 1 }, name: 'a_1_b_1' }]), undefined);
  assert.equal(decide({ a: 'hashed' }, [{ v: 2, key: { a: 'hashed' }, name: 'a_hashed' }]), undefined);
  assert.equal(decide({ _id: 1 }, []), undefined);
});

test('an index on other fields, another direction or another order is not usable', () => {
  for (const key of [{ b: 1, a: 1 }, { a: -1 }, { a: 'hashed' }]) {
    assert.throws(() => decide({ a: 1 }, [{ v: 2, key, name: 'x' }]), invalidOptions(/Please create an index/));
  }
});

test('sparse, partial and collated indexes are not usable and the reasons are reported', () => {
  const sparse = { v: 2, key: { a: 1 }, name: 'a_1', sparse: true };
  assert.throws(() => decide({ a: 1 }, [sparse]), invalidOptions(/Index a_1 cannot be used for sharding because \[ Index key is sparse\. \]$/));
  assert.throws(() => decide({ a: 1 }, [{ v: 2, key: { a: 1 }, name: 'p', partialFilterExpression: { a: 1 } }]), invalidOptions(/Index key is partial\./));
  assert.throws(() => decide({ a: 1 }, [{ v: 2, key: { a: 1 }, name: 'c', collation: { locale: 'fr' } }]), invalidOptions(/non-simple collation/));
});

test('a hashed index with a non-default seed cannot back a hashed shard key', () => {
  assert.throws(() => decide({ a: 'hashed' }, [{ v: 2, key: { a: 'hashed' }, name: 'a_hashed', seed: 7 }]), invalidOptions(/non-default seed of 7$/));
});

test('an existing unique index must start with the shard key fields', () => {
  const unique = { v: 2, key: { b: 1 }, name: 'b_1', unique: true };
  assert.throws(() => decide({ a: 1 }, [unique], { empty: true }), invalidOptions(/with unique index on \{ b: 1 \} and proposed shard key \{ a: 1 \}/));
  assert.equal(decide({ a: 1 }, [{ v: 2, key: { a: 1, b: 1 }, name: 'ab', unique: true }]), undefined);
});

test('a unique shard key needs a unique index on exactly the key', () => {
  assert.throws(() => decide({ a: 1 }, [{ v: 2, key: { a: 1 }, name: 'a_1' }], { unique: true }), invalidOptions(/index not unique, and unique index explicitly specified$/));
  assert.equal(decide({ a: 1 }, [{ v: 2, key: { a: 1 }, name: 'a_1', unique: true }], { unique: true }), undefined);
  assert.equal(decide({ _id: 1 }, [], { unique: true }), undefined);
});

test('a unique shard key with only a wider index builds the exact one on an empty collection', () => {
  const wider = { v: 2, key: { a: 1, b: 1 }, name: 'a_1_b_1' };
  assert.deepEqual(decide({ a: 1 }, [wider], { unique: true, empty: true }), { key: { a: 1 }, name: 'a_1', unique: true });
  assert.throws(() => decide({ a: 1 }, [wider], { unique: true }), invalidOptions(/Please create an index/));
});

test('the _id index spec never carries unique', () => {
  assert.deepEqual(shardKeyIndexSpec({ _id: 1 }, true), { key: { _id: 1 }, name: '_id_1' });
});

test('a collection that does not exist yet needs nothing built for {_id: 1}', () => {
  assert.equal(decide({ _id: 1 }, [], { empty: true }), undefined);
});
