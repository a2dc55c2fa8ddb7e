import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BSON } from 'bson';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { attachSequence, bodyDocuments, sequenceBytes } from './original_bytes.js';

const a = { _id: 1, k: 'a' };
const b = { _id: 2, k: 'b', documents: [1] };

test("an insert's documents in the body come out as their bytes, the body without them", () => {
  const split = bodyDocuments(serializeDocument({ insert: 'c', documents: [a, b], ordered: true, $db: 'db' }))!;
  assert.deepEqual(deserializeDocument(split.rest), { insert: 'c', ordered: true, $db: 'db' });
  assert.deepEqual(split.documents, [serializeDocument(a), serializeDocument(b)]);
  assert.deepEqual(bodyDocuments(serializeDocument({ insert: 'c', documents: [] }))!.documents, []);
});

test('any other body is left to decoding', () => {
  const cases: [string, Doc][] = [
    ['not an insert', { update: 'c', documents: [a] }],
    ['documents not right after insert', { insert: 'c', ordered: true, documents: [a] }],
    ['a value that is not a document', { insert: 'c', documents: [a, 5] }],
    ['not an array', { insert: 'c', documents: a }],
    ['a second documents field', { insert: 'c', documents: [a], comment: { documents: 1 } }],
  ];
  for (const [why, cmd] of cases) assert.equal(bodyDocuments(Buffer.from(BSON.serialize(cmd))), undefined, why);
  const corrupt = serializeDocument({ insert: 'c', documents: [a] });
  // After the name: the array's length, the first element's type and name '0', then its length.
  corrupt.writeInt32LE(1000, corrupt.indexOf('documents') + 10 + 4 + 1 + 2);
  assert.equal(bodyDocuments(corrupt), undefined, 'a document running past its array');
});

test('a sequence decodes on first read; setting the field drops its bytes; copies do not carry them', () => {
  const cmd: Doc = { insert: 'c' };
  attachSequence(cmd, 'documents', [serializeDocument(a)]);
  assert.deepEqual(sequenceBytes(cmd, 'documents'), [serializeDocument(a)]);
  assert.deepEqual(cmd.documents, [a]);
  assert.equal(cmd.documents, cmd.documents, 'decoded once');
  const copy = { ...cmd };
  assert.deepEqual(copy, { insert: 'c', documents: [a] });
  assert.equal(sequenceBytes(copy, 'documents'), undefined);
  cmd.documents = [b];
  assert.equal(sequenceBytes(cmd, 'documents'), undefined);
  assert.deepEqual(cmd.documents, [b]);
});
