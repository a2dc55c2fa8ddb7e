import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Double } from 'bson';
import { MongoError } from '../../base/errors.js';
import { StorageEngine } from '../../storage/storage_engine.js';
import { checkAgainstExisting, validateIndexSpec } from './index_spec.js';

function refusedWith(code: number, message?: RegExp) {
  return (e: unknown): boolean => e instanceof MongoError && e.code === code && (message === undefined || message.test(e.message));
}

describe('an index spec', () => {
  it('takes a TTL index with MongoDB 7.0\'s rules and codes', () => {
    assert.deepEqual(validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: 3600 }), { v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 3600 });
    assert.equal(validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: new Double(0.5) }).expireAfterSeconds instanceof Double, true, 'kept as given');
    assert.throws(() => validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: 'soon' }), refusedWith(67, /must be numeric/));
    assert.throws(() => validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: -1 }), refusedWith(67, /less than 0/));
    assert.throws(() => validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: 2147483648 }), refusedWith(67, /32-bit/));
    assert.throws(() => validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: new Double(NaN) }), refusedWith(67, /NaN/));
    assert.throws(() => validateIndexSpec({ key: { at: 1, b: 1 }, name: 'ab', expireAfterSeconds: 10 }), refusedWith(67, /single-field/));
    assert.throws(() => validateIndexSpec({ key: { _id: 1 }, name: '_id_', expireAfterSeconds: 10 }), refusedWith(197, /'expireAfterSeconds' is not valid for an _id index/));
  });

  it('keeps background as given, as listIndexes shows it', () => {
    assert.deepEqual(validateIndexSpec({ key: { a: 1 }, name: 'a_1', background: false }), { v: 2, key: { a: 1 }, name: 'a_1', background: false });
    assert.equal(validateIndexSpec({ key: { a: 1 }, name: 'a_1', background: true }).background, true);
  });

  it('keeps hidden: true, drops hidden: false and refuses anything else', () => {
    assert.equal(validateIndexSpec({ key: { a: 1 }, name: 'a_1', hidden: true }).hidden, true);
    assert.equal('hidden' in validateIndexSpec({ key: { a: 1 }, name: 'a_1', hidden: false }), false);
    assert.throws(() => validateIndexSpec({ key: { a: 1 }, name: 'a_1', hidden: 1 }), refusedWith(14, /'hidden' must be a bool/));
    assert.throws(() => validateIndexSpec({ key: { _id: 1 }, name: '_id_', hidden: true }), refusedWith(197));
  });

  it('leaves the simple collation out and keeps any other whole, as MongoDB does', () => {
    assert.equal('collation' in validateIndexSpec({ key: { a: 1 }, name: 'a_1', collation: { locale: 'simple' } }), false);
    assert.deepEqual(validateIndexSpec({ key: { a: 1 }, name: 'a_1', collation: { locale: 'en', strength: 2 } }).collation, {
      locale: 'en', caseLevel: false, caseFirst: 'off', strength: 2, numericOrdering: false, alternate: 'non-ignorable',
      maxVariable: 'punct', normalization: false, backwards: false, version: '57.1',
    });
    assert.throws(() => validateIndexSpec({ key: { a: 1 }, name: 'a_1', collation: {} }), refusedWith(2, /cannot be an empty object/));
    assert.throws(() => validateIndexSpec({ key: { a: 1 }, name: 'a_1', collation: { locale: 'sv', strength: 1 } }), refusedWith(238, /cannot follow the tailoring of locale 'sv'/));
    assert.throws(() => validateIndexSpec({ key: { a: 1 }, name: 'a_1', collation: 'en' }), refusedWith(14));
    assert.throws(() => validateIndexSpec({ key: { a: 1 }, name: 'a_1', collation: { locale: 'xx_nowhere' } }), refusedWith(2, /locale/));
  });

  it('conflicts with an existing index of the same name and key that differs in expireAfterSeconds or hidden', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-index-spec-'));
    const engine = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
    try {
      const coll = engine.createCollection('t.c');
      engine.createIndexes(coll, [validateIndexSpec({ key: { a: 1 }, name: 'a_1', hidden: true }), validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: 60 })]);
      assert.equal(checkAgainstExisting(coll, validateIndexSpec({ key: { a: 1 }, name: 'a_1', hidden: true })), 'exists');
      assert.equal(checkAgainstExisting(coll, validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: new Double(60) })), 'exists');
      assert.throws(() => checkAgainstExisting(coll, validateIndexSpec({ key: { a: 1 }, name: 'a_1', hidden: false })), refusedWith(85, /equivalent index already exists/));
      assert.throws(() => checkAgainstExisting(coll, validateIndexSpec({ key: { at: 1 }, name: 'at_1' })), refusedWith(85));
      assert.throws(() => checkAgainstExisting(coll, validateIndexSpec({ key: { at: 1 }, name: 'at_1', expireAfterSeconds: 30 })), refusedWith(85));
      assert.throws(() => checkAgainstExisting(coll, validateIndexSpec({ key: { at: 1 }, name: 'other', expireAfterSeconds: 30 })), refusedWith(85, /different name/));
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes one text index per collection: the same again is a no-op, the same name with other options conflicts, any other is refused', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-index-spec-'));
    const engine = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
    try {
      const coll = engine.createCollection('t.c');
      const spec = validateIndexSpec({ key: { title: 'text', body: 'text' }, name: 'text1' });
      assert.deepEqual(spec.key, { _fts: 'text', _ftsx: 1 });
      engine.createIndexes(coll, [spec]);
      assert.equal(checkAgainstExisting(coll, validateIndexSpec({ key: { title: 'text', body: 'text' }, name: 'text1' })), 'exists');
      assert.equal(checkAgainstExisting(coll, validateIndexSpec(spec)), 'exists', 'the spec as listIndexes shows it');
      assert.throws(() => checkAgainstExisting(coll, validateIndexSpec({ key: { title: 'text' }, name: 'text1' })), refusedWith(85));
      assert.throws(() => checkAgainstExisting(coll, validateIndexSpec({ key: { other: 'text' }, name: 'text2' })), refusedWith(67, /only one text index per collection allowed, found existing text index "text1"/));
      assert.equal(checkAgainstExisting(coll, validateIndexSpec({ key: { title: 1 }, name: 'title_1' })), 'new');
      assert.throws(() => validateIndexSpec({ key: { t: 'text', h: 'hashed' }, name: 'x' }), refusedWith(67));
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
