import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deserializeDocument, serializeDocument } from '../bson/values.js';
import { RawArray, RawArrayBuilder, RawDocument, serializeWithRaw } from './raw_bson.js';

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

// A string's length prefix is written once its bytes are in; when those bytes made the scratch
// buffer grow, the prefix must land in the new buffer, not the one just left behind.
test('a string whose bytes make the scratch buffer grow keeps its length', () => {
  // More than the scratch buffer ever keeps between replies (1 MiB) needs: it grows inside this string.
  const s = 'x'.repeat(400_000);
  assert.deepEqual(deserializeDocument(serializeWithRaw({ a: 1, s })), { a: 1, s });
});

// As a router answers a change stream's getMore under concurrent writers: a few hundred small
// events, each with its resume token's long string, past the scratch buffer's first 64 KB.
test('a reply of small events past the scratch buffer\'s first 64 KB decodes whole', () => {
  // A reply over 1 MiB sets the scratch buffer back to its first size.
  serializeWithRaw({ s: 'y'.repeat(1 << 20) });
  const nextBatch = Array.from({ length: 300 }, (_, i) => ({
    _id: { _data: `82${i.toString(16).padStart(8, '0')}${'0123456789ABCDEF'.repeat(8)}04` },
    operationType: 'insert',
    fullDocument: { _id: i, region: 'g' },
    ns: { db: 'app', coll: 'items' },
    documentKey: { region: 'g', _id: i },
  }));
  const reply = { cursor: { nextBatch, postBatchResumeToken: nextBatch[299]!._id, id: 5, ns: 'app.items' }, ok: 1 };
  assert.deepEqual(deserializeDocument(serializeWithRaw(reply)), reply);
});

// A node's or router's find reply: its documents are copied in as they are, and the namespace
// after them is a string that may be the one to cross the scratch buffer's end.
test('a find reply whose namespace comes where the scratch buffer ends decodes whole', () => {
  for (let size = 65_300; size < 65_536; size += 7) {
    serializeWithRaw({ s: 'y'.repeat(1 << 20) });
    const doc = { _id: 1, pad: 'p'.repeat(size - 24) };
    const reply = { cursor: { firstBatch: [new RawDocument(serializeDocument(doc))], id: 0, ns: 'app.items' }, ok: 1 };
    assert.deepEqual(deserializeDocument(serializeWithRaw(reply)), { cursor: { firstBatch: [doc], id: 0, ns: 'app.items' }, ok: 1 }, `a document of ${size} bytes`);
  }
});
