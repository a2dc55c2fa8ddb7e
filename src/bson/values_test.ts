import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BSON, Code } from 'bson';
import { bsonTag, deserializeDocument, isPlainObject, serializeDocument } from './values.js';

describe('decoding a document holding DBRef-shaped subdocuments', () => {
  const doc = {
    _id: 1,
    one: { $ref: 'foo', $id: 7 },
    members: [{ $ref: 'foo', $id: 7, $db: 'other', note: 'x' }],
    reordered: { $id: 9, extra: true, $ref: 'a.b' },
    code: new Code('f', { r: { $ref: 'c', $id: 1 } }),
    n: 1.5,
  };

  it('gives plain documents, which query and update paths can follow', () => {
    const back = deserializeDocument(BSON.serialize(doc));
    assert.equal(isPlainObject(back.one), true);
    assert.deepEqual(back.one, { $ref: 'foo', $id: 7 });
    assert.deepEqual(Object.keys((back.members as unknown[])[0] as object), ['$ref', '$id', '$db', 'note']);
    assert.deepEqual(Object.keys(back.reordered as object), ['$id', 'extra', '$ref']);
    assert.equal(bsonTag(((back.code as Code).scope as { r: unknown }).r), undefined);
    assert.equal(bsonTag(back.n), 'Double');
  });

  it('keeps the bytes: re-encoding gives what was received', () => {
    const bytes = BSON.serialize(doc);
    assert.deepEqual(serializeDocument(deserializeDocument(bytes)), Buffer.from(bytes));
    const root = BSON.serialize({ $ref: 'r', $id: 2 });
    assert.deepEqual(serializeDocument(deserializeDocument(root)), Buffer.from(root), 'a DBRef-shaped whole document');
  });
});
