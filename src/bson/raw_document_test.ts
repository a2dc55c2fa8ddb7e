import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Binary, BSONRegExp, Decimal128, Double, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import { deserializeDocument, serializeDocument, type Doc } from './values.js';
import { LazyDocument, readPlainDocument } from './raw_document.js';

const isPlainValidBson = (bytes: Buffer) => readPlainDocument(bytes) !== undefined;

const SAMPLE: Doc = {
  _id: new ObjectId(),
  i: 7,
  neg: -2147483648,
  d: new Double(1),
  nz: new Double(-0),
  l: Long.fromString('-9007199254740993'),
  s: 'héllo ✓',
  empty: '',
  t: true,
  f: false,
  n: null,
  date: new Date(-1234567),
  bin: new Binary(Buffer.from([1, 2, 3]), 0),
  dec: Decimal128.fromString('1.5'),
  ts: new Timestamp({ t: 5, i: 6 }),
  min: new MinKey(),
  max: new MaxKey(),
  sub: { a: [1, { b: 'c' }], ref: { $ref: 'x', $id: 1 } },
  arr: [[], {}, 'x'],
  re: new BSONRegExp('a+', 'i'),
};

describe('reading a document from its bytes', () => {
  it('decodes each top-level field as decoding the whole document does', () => {
    const bytes = serializeDocument(SAMPLE);
    const whole = deserializeDocument(bytes);
    for (const name of Object.keys(SAMPLE)) {
      assert.deepEqual(new LazyDocument(bytes).fields([name])[name], whole[name], name);
    }
  });

  it('decodes only the top-level fields that the paths asked for start with', () => {
    const doc = new LazyDocument(serializeDocument({ _id: 1, a: { b: 2 }, c: 3 }));
    assert.deepEqual(doc.fields(['a.b']), { a: { b: 2 } });
    assert.deepEqual(doc.fields(['_id', 'missing']), { a: { b: 2 }, _id: 1 });
    assert.deepEqual(doc.whole(), { _id: 1, a: { b: 2 }, c: 3 });
  });

  it('takes the last of two elements with the same name, as bson does', () => {
    const bytes = Buffer.from('1b000000105f69640001000000105f6964000200000002780002000000790000', 'hex');
    bytes.writeInt32LE(bytes.length, 0);
    assert.equal(new LazyDocument(bytes).fields(['_id'])._id, deserializeDocument(bytes)._id);
    assert.equal(readPlainDocument(bytes)?.ids.length, 2);
  });

  it('finds the top-level elements of one more name on the same walk', () => {
    const bytes = serializeDocument({ _id: 1, k: 5, a: { k: 6 }, b: [{ k: 7 }] });
    const plain = readPlainDocument(bytes, Buffer.from('k'));
    assert.equal(plain?.named.length, 1);
    assert.equal(bytes.readInt32LE(plain!.named[0]!.value), 5);
    assert.equal(plain!.ids.length, 1);
    assert.deepEqual(readPlainDocument(bytes)?.named, []);
    assert.deepEqual(readPlainDocument(bytes, Buffer.from('missing'))?.named, []);
  });

  it('finds plain documents valid and leaves documents with $-prefixed names to decoding', () => {
    assert.equal(isPlainValidBson(serializeDocument({ _id: 1, a: [{ b: 'x' }], s: 'é' })), true);
    assert.equal(isPlainValidBson(serializeDocument({ _id: 1, a: { $ref: 'c', $id: 1 } })), false);
    assert.equal(isPlainValidBson(serializeDocument({ $x: 1 })), false);
    const badUtf8 = serializeDocument({ s: 'ab' });
    badUtf8[badUtf8.length - 3] = 0xff;
    assert.equal(isPlainValidBson(badUtf8), false);
    assert.throws(() => deserializeDocument(badUtf8));
  });

  it('never finds valid what decoding refuses', () => {
    const base = serializeDocument({ _id: 1, s: 'abc', a: [1, 'x', { y: true }], d: new Double(2.5), b: new Binary(Buffer.from('zz'), 4) });
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), (edits) => {
      const bytes = Buffer.from(base);
      for (const [at, value] of edits) bytes[at] = value;
      if (isPlainValidBson(bytes)) deserializeDocument(bytes);
    }), { numRuns: 5000 });
  });
});
