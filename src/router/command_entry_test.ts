import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, serializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { attachSequence } from '../command_layer/original_bytes.js';
import { LogicalSessionCache } from '../sessions/logical_session_cache.js';
import { countCommand, countWriteAttempts, countWriteReply, enterCommand, forwardsSession, type OpCounters } from './command_entry.js';
import type { RouterServices } from './router_services.js';
import { systemClock } from '../base/clock.js';

// The entry every routed command passes, whichever path answers it: the same refusals and the same
// session whether the command was decoded or read from its bytes, its deadline, and mongos's
// counting.

const lsid = { id: new Binary(Buffer.alloc(16, 7), 4) };

function router(): RouterServices {
  return { sessions: new LogicalSessionCache(), wallClock: systemClock } as RouterServices;
}

function counters(): OpCounters {
  return { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 };
}

test('a session read from bytes is the decoded one, and refused alike', () => {
  const decoded = router();
  const fromBytes = router();
  enterCommand(decoded, 'insert', { lsid, txnNumber: Long.fromNumber(1) });
  enterCommand(fromBytes, 'insert', { lsid: serializeDocument(lsid), txnNumber: Long.fromNumber(1) });
  enterCommand(fromBytes, 'insert', { lsid: serializeDocument(lsid) });
  const ids = (r: RouterServices): string[] => r.sessions.list().map((s) => ((s._id as Doc).id as Binary).toString('hex'));
  assert.deepEqual(ids(fromBytes), ids(decoded));
  assert.equal(decoded.sessions.size, 1);
  const refusals: [Doc, number][] = [
    [{ txnNumber: Long.fromNumber(1) }, ErrorCodes.InvalidOptions],
    [{ lsid: serializeDocument(lsid), txnNumber: Long.fromNumber(-1) }, ErrorCodes.InvalidOptions],
  ];
  for (const [session, code] of refusals) {
    const r = router();
    assert.throws(() => enterCommand(r, 'insert', session), (err: unknown) => err instanceof MongoError && err.code === code, JSON.stringify(Object.keys(session)));
    assert.equal(r.sessions.size, 0, 'a refused command touches no session');
  }
  assert.throws(() => enterCommand(router(), 'find', { lsid, txnNumber: Long.fromNumber(1) }), (err: unknown) => err instanceof MongoError && err.code === 50768, 'a txnNumber on a read');
});

test("a maxTimeMS is read into a deadline, but for getMore's, which is a wait", () => {
  const before = performance.now();
  const deadline = enterCommand(router(), 'find', { maxTimeMS: 50 });
  assert.ok(deadline !== undefined && deadline >= before + 50 && deadline <= performance.now() + 50);
  assert.equal(enterCommand(router(), 'find', {}), undefined);
  assert.equal(enterCommand(router(), 'find', { maxTimeMS: 0 }), undefined, '0 is no limit');
  assert.equal(enterCommand(router(), 'getMore', { maxTimeMS: 50 }), undefined);
  assert.throws(() => enterCommand(router(), 'find', { maxTimeMS: -1 }), (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.BadValue);
});

test("only a retryable write's session goes to its shards", () => {
  assert.equal(forwardsSession(true, { lsid, txnNumber: Long.fromNumber(1) }), true);
  assert.equal(forwardsSession(true, { lsid }), false);
  assert.equal(forwardsSession(false, { lsid, txnNumber: Long.fromNumber(1) }), false);
  assert.equal(forwardsSession(true, { lsid, txnNumber: Long.fromNumber(1), autocommit: false }), false, 'a transaction statement gets its session from the transaction');
});

test('commands are counted as mongos counts them, writes by the statements attempted', () => {
  const c = counters();
  for (const name of ['find', 'find', 'getMore', 'insert', 'update', 'delete', 'hello', 'aggregate']) countCommand(c, name);
  assert.deepEqual(c, { insert: 0, query: 2, update: 0, delete: 0, getmore: 1, command: 2 });
  const failedAt = (index: number): Doc => ({ n: index, writeErrors: [{ index, code: 11000 }], ok: 1 });
  countWriteAttempts(c, 'insert', 5, true, { n: 5, ok: 1 });
  countWriteAttempts(c, 'insert', 5, true, failedAt(2));
  countWriteAttempts(c, 'insert', 5, false, failedAt(2));
  countWriteAttempts(c, 'insert', 5, true, { ok: 0, code: 2, errmsg: 'bad' });
  assert.equal(c.insert, 5 + 3 + 5 + 0);
  const sequenced: Doc = { insert: 'c', ordered: false };
  attachSequence(sequenced, 'documents', [serializeDocument({ _id: 1 }), serializeDocument({ _id: 2 })]);
  countWriteReply(c, 'insert', sequenced, failedAt(0));
  assert.equal(c.insert, 13 + 2);
  countWriteReply(c, 'update', { update: 'c', updates: [{ q: {}, u: {} }] }, { n: 1, nModified: 1, ok: 1 });
  countWriteReply(c, 'delete', { delete: 'c', deletes: [{ q: {}, limit: 1 }, { q: {}, limit: 1 }] }, failedAt(0));
  assert.deepEqual([c.update, c.delete], [1, 1]);
});
