import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Double, Long, ObjectId } from 'bson';
import { serializeDocument } from '../bson/values.js';
import { OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import { readPreferenceIn, replyErrorCode, replyTopologyVersion } from './raw_fields.js';

test('a reply\'s error code and topologyVersion are read from its bytes, whatever their place and number type', () => {
  const processId = new ObjectId();
  const reply = serializeDocument({ ok: 0, errmsg: 'not primary', code: 10107, codeName: 'NotWritablePrimary', topologyVersion: { processId, counter: Long.fromNumber(4) } });
  assert.equal(replyErrorCode(reply), 10107);
  assert.deepEqual(replyTopologyVersion(reply), { processId, counter: Long.fromNumber(4) });
  assert.equal(replyErrorCode(serializeDocument({ code: new Double(189), ok: 0 })), 189);
  assert.equal(replyErrorCode(serializeDocument({ code: Long.fromNumber(91), ok: 0 })), 91);
  // A nested code is some write's, not the reply's.
  assert.equal(replyErrorCode(serializeDocument({ ok: 1, n: 0, writeErrors: [{ index: 0, code: 11000 }] })), undefined);
});

test('the $readPreference of a message\'s body is found after the header', () => {
  const body = serializeDocument({ find: 'c', filter: { a: 1 }, $db: 'test', $readPreference: { mode: 'secondary', tags: [{ dc: 'east' }] } });
  const message = Buffer.alloc(OP_MSG_REPLY_PREFIX + body.length);
  body.copy(message, OP_MSG_REPLY_PREFIX);
  assert.deepEqual(readPreferenceIn(message, OP_MSG_REPLY_PREFIX), { mode: 'secondary', tags: [{ dc: 'east' }] });
  assert.equal(readPreferenceIn(serializeDocument({ find: 'c', $db: 'test' }), 0), undefined);
});
