import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, Timestamp, UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import {
  absorbMigrated, beginTxnNumber, migratedStatements, recordStatements, recordTransactionState, sessionFromRecord, statementRan, withHistoryEntries,
  type CachedSession,
} from './session_catalog_decisions.js';
import { lsidDoc, sessionIdOf } from './session_id.js';
import { incompleteHistoryMarker } from './session_migration.js';

const lsid = sessionIdOf({ id: new UUID() });
const session = lsidDoc(lsid);
const ctx = { session, ts: new Timestamp({ t: 5, i: 1 }), wallDate: new Date(0) };
const opTime = { ts: ctx.ts, t: Long.fromNumber(-1) };

function known(fields: Partial<CachedSession> = {}): CachedSession {
  return { txnNum: 3, executed: new Map([[0, { op: 'insert' }]]), incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false, ...fields };
}

const code = (c: number) => (e: unknown) => e instanceof MongoError && e.code === c;

test('a txnNumber continues the current retryable write, a newer one starts afresh carrying whether older history remains, an older one is refused', () => {
  assert.deepEqual(beginTxnNumber(known(), 3, lsid), { kind: 'current' });
  const started = beginTxnNumber(known({ spilled: true }), 4, lsid);
  assert.equal(started.kind, 'new');
  assert.deepEqual(started.kind === 'new' ? started.state : undefined, { txnNum: 4, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: false, olderHistory: true });
  assert.deepEqual(beginTxnNumber(undefined, 1, lsid), { kind: 'new', state: { txnNum: 1, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: false, olderHistory: false } });
  assert.throws(() => beginTxnNumber(known(), 2, lsid), code(ErrorCodes.TransactionTooOld));
  // The retry of a write a router converted to a transaction that committed.
  assert.throws(() => beginTxnNumber(known({ committedTransaction: true }), 3, lsid), code(ErrorCodes.IncompleteTransactionHistory));
});

test('a statement ran when the current txnNumber knows it; with history missing, an unknown one may have and is refused', () => {
  assert.equal(statementRan(known(), 3, 0, lsid), true);
  assert.equal(statementRan(known(), 3, 1, lsid), false);
  assert.equal(statementRan(known(), 4, 0, lsid), false);
  assert.equal(statementRan(undefined, 1, 0, lsid), false);
  assert.throws(() => statementRan(known({ incompleteHistory: true }), 3, 1, lsid), code(ErrorCodes.IncompleteTransactionHistory));
  assert.throws(() => statementRan(known(), 2, 0, lsid), code(ErrorCodes.TransactionTooOld));
});

test('the first command of a txnNumber writes the record (dropping older history first), a later one a history entry and the record\'s times', () => {
  const stmts = [{ stmtId: 0, op: 'insert' }];
  const first = recordStatements(known({ recordWritten: false, olderHistory: true }), ctx, 't.c', stmts, undefined);
  assert.deepEqual(first.writes, [
    { type: 'dropOlderHistory', session, txnNum: Long.fromNumber(3) },
    { type: 'putRecord', session, record: { _id: session, txnNum: Long.fromNumber(3), lastWriteOpTime: opTime, lastWriteDate: ctx.wallDate, ns: 't.c', stmts } },
  ]);
  assert.deepEqual(first.next, { recordWritten: true, olderHistory: false });
  assert.deepEqual(recordStatements(known({ recordWritten: false }), ctx, 't.c', stmts, undefined).writes.map((w) => w.type), ['putRecord']);
  const later = recordStatements(known(), ctx, 't.c', [{ stmtId: 4, op: 'delete', n: 1 }], { kind: 'preImage', doc: { _id: 1 } });
  assert.deepEqual(later.writes.map((w) => w.type), ['insertHistory', 'setRecordFields', 'putImage']);
  assert.deepEqual(later.writes[0], { type: 'insertHistory', entry: { _id: { lsid: session, txnNum: Long.fromNumber(3), stmtId: 4 }, ns: 't.c', ts: ctx.ts, stmts: [{ stmtId: 4, op: 'delete', n: 1 }] } });
  assert.deepEqual(later.next, { spilled: true });
  assert.deepEqual(recordStatements(known({ spilled: true }), ctx, 't.c', [{ stmtId: 5, op: 'insert' }], undefined).next, {});
});

test('migrated history: a newer txnNumber here keeps it, known statements are skipped, a later part of the txnNumber on record goes to the history, anything else becomes the record', () => {
  const h = { lsid: session, txnNum: 3, stmts: [{ stmtId: 0, op: 'insert' }, { stmtId: 1, op: 'insert' }] };
  assert.equal(migratedStatements(known({ txnNum: 4 }), h), undefined);
  assert.equal(migratedStatements(known({ executed: new Map([[0, { op: 'insert' }], [1, { op: 'insert' }]]) }), h), undefined);
  assert.deepEqual(migratedStatements(known(), h), [{ stmtId: 1, op: 'insert' }]);
  assert.deepEqual(migratedStatements(known({ incompleteHistory: true }), { ...h, stmts: [incompleteHistoryMarker()] }), undefined);
  const joined = absorbMigrated(known(), h, [{ stmtId: 1, op: 'insert' }], ctx, 't.c', 'm1');
  assert.deepEqual(joined.writes.map((w) => w.type), ['insertHistory', 'setRecordFields']);
  assert.deepEqual(joined.state.executed, new Map([[0, { op: 'insert' }], [1, { op: 'insert' }]]));
  assert.equal(joined.state.spilled, true);
  const anew = absorbMigrated(known({ txnNum: 2, spilled: true }), h, h.stmts, ctx, 't.c', 'm1');
  assert.deepEqual(anew.writes.map((w) => w.type), ['dropOlderHistory', 'putRecord']);
  assert.deepEqual({ ...anew.state, executed: [...anew.state.executed.keys()] }, { txnNum: 3, executed: [0, 1], incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false });
});

test('a transaction\'s state replaces the record, and a record with its history read from disk gives back what the session knew', () => {
  const { state, writes } = recordTransactionState(known({ olderHistory: true }), session, 7, { state: 'committed' }, true);
  assert.deepEqual(writes, [
    { type: 'dropOlderHistory', session, txnNum: Long.fromNumber(7) },
    { type: 'putRecord', session, record: { _id: session, txnNum: Long.fromNumber(7), state: 'committed' } },
  ]);
  assert.equal(state.committedTransaction, true);
  assert.equal(sessionFromRecord(undefined), undefined);
  assert.equal(sessionFromRecord({ _id: session }), undefined);
  const loaded = withHistoryEntries(sessionFromRecord({ _id: session, txnNum: Long.fromNumber(3), stmts: [{ stmtId: 0, op: 'insert' }] })!, [{ stmts: [incompleteHistoryMarker()] }]);
  assert.deepEqual({ ...loaded, executed: [...loaded.executed.keys()] }, {
    txnNum: 3, executed: [0], incompleteHistory: true, spilled: true, recordWritten: true, olderHistory: false, committedTransaction: false,
  });
});
