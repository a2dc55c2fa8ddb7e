import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deserializeDocument, serializeDocument } from '../bson/values.js';
import { RawArray, RawArrayBuilder, serializeWithRaw } from './raw_bson.js';

test('a raw array built from reused buffers holds each document as it was pushed, past its first size', () => {
  const builder = new RawArrayBuilder(8);
  const scratch = Buffer.alloc(4096);
  const docs = Array.from({ length: 12 }, (_, i) => ({ _id: i, s: 'x'.repeat(i * 37) }));
  for (const doc of docs) {
    const bytes = serializeDocument(doc);
    bytes.copy(scratch);
    builder.push(scratch.subarray(0, bytes.length));
    scratch.fill(0xff);
  }
  assert.equal(builder.length, docs.length);
  const reply = deserializeDocument(serializeWithRaw({ objects: builder.finish(), ok: 1 }));
  assert.deepEqual(reply, { objects: docs, ok: 1 });
});

test('an empty raw array is an empty BSON array', () => {
  const empty = new RawArrayBuilder(0).finish();
  assert.ok(empty instanceof RawArray);
  assert.deepEqual(deserializeDocument(serializeWithRaw({ a: empty })), { a: [] });
});
