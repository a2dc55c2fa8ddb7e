import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, ObjectId, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { compareTokens, decodeResumeToken, eventIdentifier, eventToken, highWaterMarkToken } from './resume_token.js';
import { decodeKeyString, encodeKeyString } from './key_string_v1.js';

const UUID = new Binary(Buffer.from('a5093abb38fe4b9ea67f01bb1a96d812', 'hex'), Binary.SUBTYPE_UUID);
const ts = (t: number, i: number): Timestamp => new Timestamp({ t, i });

test('the bytes are MongoDB KeyString V1 bytes for the fields of a token', () => {
  // A version-1 token MongoDB 5.0 wrote for {_id: '___x'}: the same bytes come out.
  const bytes = encodeKeyString([ts(0x612e8513, 1), 1, 128, 0, false, UUID, { _id: '___x' }]);
  assert.equal(bytes.toString('hex').toUpperCase(), '82612E8513000000012B022C0100296E5A1004A5093ABB38FE4B9EA67F01BB1A96D812463C5F6964003C5F5F5F78000004');
});

test('a token decodes to what was encoded, document keys of every common _id type included', () => {
  for (const id of [1, -5, 2 ** 40, new Long(7), 'a\u0000b', new ObjectId(), new Date(1_700_000_000_000), { a: [1, 'x', null, true] }, 1.5, -2.25]) {
    const token = eventToken(ts(100, 3), 2, UUID, eventIdentifier('insert', { _id: id }));
    const data = decodeResumeToken(token);
    assert.equal(data.clusterTime.t, 100);
    assert.equal(data.clusterTime.i, 3);
    assert.equal(data.version, 2);
    assert.equal(data.tokenType, 128);
    assert.equal(data.txnOpIndex, 2);
    assert.equal(data.fromInvalidate, false);
    assert.equal(Buffer.compare(data.uuid!.buffer, UUID.buffer), 0);
    const key = (data.eventIdentifier!.documentKey as { _id: unknown })._id;
    assert.deepEqual(key instanceof Long ? key : key, id instanceof Long ? 7 : id);
  }
});

test('tokens order as strings by time, then type (a high-water mark first), then transaction index', () => {
  const tokens = [
    highWaterMarkToken(ts(5, 1)),
    eventToken(ts(5, 1), 0, UUID, eventIdentifier('insert', { _id: 9 })),
    eventToken(ts(5, 1), 1, UUID, eventIdentifier('insert', { _id: 1 })),
    eventToken(ts(5, 1), 12, UUID, eventIdentifier('delete', { _id: 1 })),
    highWaterMarkToken(ts(5, 2)),
    eventToken(ts(5, 2), 0, undefined, eventIdentifier('dropDatabase', undefined)),
    highWaterMarkToken(ts(6, 0)),
    eventToken(ts(300, 0), 0, UUID, eventIdentifier('insert', { _id: 1 })),
  ];
  const sorted = [...tokens].sort(compareTokens);
  assert.deepEqual(sorted, tokens);
  assert.equal(decodeResumeToken(highWaterMarkToken(ts(5, 1))).tokenType, 0);
});

test('malformed tokens answer MongoDB\'s codes', () => {
  const code = (token: unknown): number => {
    try {
      decodeResumeToken(token);
    } catch (err) {
      return (err as MongoError).code;
    }
    return 0;
  };
  assert.equal(code({ _data: 5 }), 40647);
  assert.equal(code('x'), 40647);
  assert.equal(code({ _data: 'zz' }), 9);
  assert.equal(code({ _data: 'ABC' }), 9);
  assert.equal(code({ _data: '' }), 9);
  assert.equal(code({ _data: '04' }), 40649);
  assert.equal(code({ _data: encodeKeyString([ts(1, 1)]).toString('hex') }), 50796);
  assert.equal(code({ _data: encodeKeyString([ts(1, 1), 7]).toString('hex') }), 50795);
  assert.equal(code({ _data: encodeKeyString([ts(1, 1), 2, 5, 0, false, null]).toString('hex') }), 51057);
  assert.equal(code({ _data: encodeKeyString([ts(1, 1), 2, 128, 0, false, null]).toString('hex') }), 6189501);
  assert.equal(code({ _data: encodeKeyString([ts(1, 1), 2, 0, 0, false, null, { a: 1 }]).toString('hex') }), 6189504);
  assert.equal(code({ _data: highWaterMarkToken(ts(1, 1))._data, _typeBits: 'x' }), 40648);
  assert.equal(code(highWaterMarkToken(ts(1, 1))), 0);
});

test('every value the codec writes reads back', () => {
  const values = [null, true, false, 0, 1, -1, 255, -256, 2 ** 52, 'abc', '', [], {}, { x: { y: [1, { z: 'w' }] } }, ts(1, 2)];
  assert.deepEqual(decodeKeyString(encodeKeyString(values)), values);
});
