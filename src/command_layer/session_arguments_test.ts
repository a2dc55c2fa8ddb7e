import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Binary, UUID } from 'bson';
import { KILL_ALL } from '../sessions/kill_sessions.js';
import { ANONYMOUS_UID } from '../sessions/session_id.js';
import { killPatterns, sessionsArgument } from './session_arguments.js';

describe('the session commands read their arguments as MongoDB does', () => {
  it('killSessions kills the sessions it names, and with none every session of the (anonymous) user', () => {
    const id = new UUID();
    assert.deepEqual(killPatterns('killSessions', { killSessions: [{ id }] }), [{ ...KILL_ALL, lsid: { id, uid: ANONYMOUS_UID } }]);
    assert.deepEqual(killPatterns('killSessions', { killSessions: [] }), [KILL_ALL]);
  });

  it("killAllSessions names users by the SHA-256 of \"user@db\", their sessions' uid", () => {
    const uid = new Binary(createHash('sha256').update('app@admin').digest(), 0);
    assert.deepEqual(killPatterns('killAllSessions', { killAllSessions: [{ user: 'app', db: 'admin' }] }), [{ ...KILL_ALL, uid }]);
    assert.deepEqual(killPatterns('killAllSessions', { killAllSessions: [] }), [KILL_ALL]);
    assert.throws(() => killPatterns('killAllSessions', { killAllSessions: [{ user: 'app' }] }), { code: 14 });
  });

  it('killAllSessionsByPattern takes its patterns as they are, and with none kills all', () => {
    assert.deepEqual(killPatterns('killAllSessionsByPattern', { killAllSessionsByPattern: [{ uid: ANONYMOUS_UID }] }), [{ uid: ANONYMOUS_UID }]);
    assert.deepEqual(killPatterns('killAllSessionsByPattern', { killAllSessionsByPattern: [] }), [KILL_ALL]);
  });

  it('refuses a missing or mistyped list, and lsids that are not {id: UUID, uid?}', () => {
    assert.throws(() => killPatterns('killSessions', { killSessions: 1 }), { code: 14, message: "BSON field 'KillSessionsCmdFromClient.killSessions' is the wrong type 'int', expected type 'array'" });
    assert.throws(() => sessionsArgument('endSessions', { endSessions: [{ id: new UUID(), txn: 1 }] }), { code: 40415, message: "BSON field 'endSessions.endSessions.txn' is an unknown field." });
    assert.throws(() => sessionsArgument('refreshSessions', { refreshSessions: [{}] }), { code: 40414 });
    assert.throws(() => sessionsArgument('refreshSessions', { refreshSessions: [{ id: new UUID(), uid: 'me' }] }), { code: 14 });
  });
});
