import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, UUID } from 'bson';
import { KILL_ALL, patternFromBSON, patternToBSON, SessionKillerMatcher } from './kill_sessions.js';
import { ANONYMOUS_UID, type LogicalSessionId } from './session_id.js';

const otherUid = new Binary(Buffer.alloc(32, 7), 0);
const session = (uid = ANONYMOUS_UID): LogicalSessionId => ({ id: new UUID(), uid });

describe('killing sessions by pattern', () => {
  it('matches one session by its lsid, every session of a user by uid, and every session with neither', () => {
    const [a, b, c] = [session(), session(), session(otherUid)];
    const byLsid = new SessionKillerMatcher([{ ...KILL_ALL, lsid: a }]);
    assert.deepEqual([a, b, c].map((s) => byLsid.match(s)), [true, false, false]);
    const byUid = new SessionKillerMatcher([{ uid: otherUid }]);
    assert.deepEqual([a, b, c].map((s) => byUid.match(s)), [false, false, true]);
    assert.deepEqual([a, b, c].map((s) => new SessionKillerMatcher([{ lsid: a }, KILL_ALL]).match(s)), [true, true, true]);
    assert.deepEqual([a, b, c].map((s) => new SessionKillerMatcher([]).match(s)), [false, false, false]);
  });

  it('an lsid pattern names the session with its uid: the same id under another user is another session', () => {
    const a = session();
    assert.equal(new SessionKillerMatcher([{ lsid: { id: a.id, uid: otherUid } }]).match(a), false);
  });

  it('passes patterns on as killAllSessionsByPattern carries them, and reads them back', () => {
    const a = session();
    const sent = [{ ...KILL_ALL, lsid: a }, { uid: otherUid }, KILL_ALL].map(patternToBSON);
    assert.deepEqual(sent[0], { lsid: { id: a.id, uid: a.uid }, users: [], roles: [] });
    const back = sent.map((p, i) => patternFromBSON(p, `p.${i}`));
    assert.deepEqual(back.map(patternToBSON), sent);
  });

  it('refuses what its IDL struct refuses', () => {
    assert.throws(() => patternFromBSON('all', 'p'), { code: 14 });
    assert.throws(() => patternFromBSON({ lsid: { id: new UUID() }, everything: true }, 'p'), { code: 40415, message: "BSON field 'p.everything' is an unknown field." });
    assert.throws(() => patternFromBSON({ uid: new Binary(Buffer.alloc(3), 0) }, 'p'), { code: 14 });
    assert.throws(() => patternFromBSON({ users: [1] }, 'p'), { code: 14 });
  });
});
