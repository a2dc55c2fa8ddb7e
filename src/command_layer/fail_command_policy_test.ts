import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, UUID } from 'bson';
import {
  actsBeforeRun, addsWriteConcernError, failCommandApplies, failCommandEffect, failCommandErrorReply, transactionalWriteEffect,
  withInjectedWriteConcernError, type FailCommandTarget,
} from './fail_command_policy.js';
import { MongoError } from '../base/errors.js';

const insert: FailCommandTarget = { names: ['insert'], ns: 'db.c', appName: 'app', internalClient: false };
const retryableInsert = { insert: 'c', lsid: { id: new UUID() }, txnNumber: Long.fromNumber(1) };

test('failCommand applies to the commands it names, by any of their names', () => {
  assert.equal(failCommandApplies({ failCommands: ['insert'] }, insert), true);
  assert.equal(failCommandApplies({ failCommands: ['find', 'update'] }, insert), false);
  assert.equal(failCommandApplies({}, insert), false, 'no failCommands, no command');
  const findAndModify = { ...insert, names: ['findAndModify', 'findandmodify'] };
  assert.equal(failCommandApplies({ failCommands: ['findandmodify'] }, findAndModify), true);
  const configure = { ...insert, names: ['configureFailPoint'] };
  assert.equal(failCommandApplies({ failCommands: ['configureFailPoint'] }, configure), false, 'the command that turns it off never fails');
});

test('appName and namespace narrow it to one application and one namespace', () => {
  assert.equal(failCommandApplies({ failCommands: ['insert'], appName: 'app' }, insert), true);
  assert.equal(failCommandApplies({ failCommands: ['insert'], appName: 'other' }, insert), false);
  assert.equal(failCommandApplies({ failCommands: ['insert'], appName: 'app' }, { ...insert, appName: undefined }), false);
  assert.equal(failCommandApplies({ failCommands: ['insert'], namespace: 'db.c' }, insert), true);
  assert.equal(failCommandApplies({ failCommands: ['insert'], namespace: 'db.d' }, insert), false);
});

test("internal clients' commands fail only with failInternalCommands", () => {
  const internal = { ...insert, internalClient: true };
  assert.equal(failCommandApplies({ failCommands: ['insert'] }, internal), false);
  assert.equal(failCommandApplies({ failCommands: ['insert'], failInternalCommands: false }, internal), false);
  assert.equal(failCommandApplies({ failCommands: ['insert'], failInternalCommands: true }, internal), true);
});

test('it acts before the command runs only to block, close or fail it', () => {
  assert.equal(actsBeforeRun({ errorCode: 91 }), true);
  assert.equal(actsBeforeRun({ closeConnection: true }), true);
  assert.equal(actsBeforeRun({ blockConnection: true, blockTimeMS: 10 }), true);
  assert.equal(actsBeforeRun({ closeConnection: false, writeConcernError: { code: 91 } }), false);
  assert.deepEqual(failCommandEffect({ errorCode: 91, closeConnection: false }), { blockTimeMS: 0, closeConnection: false, errorCode: 91 });
  assert.deepEqual(failCommandEffect({ blockConnection: true, blockTimeMS: 50 }), { blockTimeMS: 50, closeConnection: false, errorCode: undefined });
  const invalidOptions = (err: unknown) => err instanceof MongoError && err.code === 72;
  assert.throws(() => failCommandEffect({ blockConnection: true }), invalidOptions);
  assert.throws(() => failCommandEffect({ blockConnection: true, blockTimeMS: -1 }), invalidOptions);
});

test("the error's labels are the data's when it has them, even none; else the server's own", () => {
  const node = { name: 'insert', cmd: retryableInsert, router: false };
  assert.deepEqual(failCommandErrorReply({ errorCode: 91 }, node, 91), {
    ok: 0, errmsg: "Failing command via 'failCommand' failpoint", code: 91, codeName: 'ShutdownInProgress', errorLabels: ['RetryableWriteError', 'NoWritesPerformed'],
  });
  assert.equal(failCommandErrorReply({ errorCode: 11600, errorLabels: [] }, node, 11600).errorLabels, undefined);
  assert.deepEqual(failCommandErrorReply({ errorCode: 112, errorLabels: ['RetryableWriteError'] }, node, 112).errorLabels, ['RetryableWriteError']);
  assert.equal(failCommandErrorReply({ errorCode: 11000 }, node, 11000).errorLabels, undefined, 'not a retriable code');
  assert.equal(failCommandErrorReply({ errorCode: 91 }, { ...node, cmd: { insert: 'c' } }, 91).errorLabels, undefined, 'not a retryable write');
  const router = { ...node, router: true };
  assert.equal(failCommandErrorReply({ errorCode: 91 }, router, 91).errorLabels, undefined, 'mongos adds no label for a code');
  assert.deepEqual(failCommandErrorReply({ errorCode: 91, errorLabels: ['RetryableWriteError'] }, router, 91).errorLabels, ['RetryableWriteError']);
});

test('a writeConcernError is added to a write that succeeded, with the labels its code calls for', () => {
  const wce = { code: 91, errmsg: 'Replication is being shut down' };
  assert.equal(addsWriteConcernError({ failCommands: ['insert'], writeConcernError: wce }, insert), true);
  assert.equal(addsWriteConcernError({ failCommands: ['insert'] }, insert), false);
  assert.equal(addsWriteConcernError({ failCommands: ['find'], writeConcernError: wce }, { ...insert, names: ['find'] }), false, 'a read waits for no write concern');
  const node = { name: 'insert', cmd: retryableInsert, router: false };
  assert.deepEqual(withInjectedWriteConcernError({ writeConcernError: wce }, node, { n: 1, ok: 1 }), { n: 1, ok: 1, writeConcernError: wce, errorLabels: ['RetryableWriteError'] });
  assert.deepEqual(withInjectedWriteConcernError({ writeConcernError: wce, errorLabels: [] }, node, { n: 1, ok: 1 }), { n: 1, ok: 1, writeConcernError: wce });
  assert.deepEqual(withInjectedWriteConcernError({ writeConcernError: { code: 64 } }, node, { n: 1, ok: 1 }), { n: 1, ok: 1, writeConcernError: { code: 64 } });
});

test('onPrimaryTransactionalWrite closes the connection unless told not to, and fails the write only when given a code', () => {
  assert.deepEqual(transactionalWriteEffect({}), { closeConnection: true, failBeforeCommitCode: undefined });
  assert.deepEqual(transactionalWriteEffect({ closeConnection: false, failBeforeCommitExceptionCode: 1 }), { closeConnection: false, failBeforeCommitCode: 1 });
});
