import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { LocalCollections } from '../query/exec/local_collection.js';
import { withEngine } from '../storage/test_support.js';
import { sessionIdOf, sessionKey } from './session_id.js';
import { LocalSessionsCollection, SESSIONS_NS } from './sessions_collection.js';
import { systemClock } from '../base/clock.js';

describe('config.system.sessions on the node that holds it', () => {
  it('is created with its TTL index on first use, refreshed, searched and removed from by session', withEngine(async (engine) => {
    const sessions = new LocalSessionsCollection(engine, systemClock);
    const [a, b, c] = [0, 1, 2].map(() => sessionIdOf({ id: new UUID() }));
    assert.deepEqual(await sessions.findRemovedSessions([a]), [a], 'no collection yet: every session is gone');
    const before = Date.now();
    await sessions.refreshSessions([a, b]);
    assert.deepEqual(engine.getCollection(SESSIONS_NS)!.index('lsidTTLIndex')!.entry.spec, { v: 2, key: { lastUse: 1 }, name: 'lsidTTLIndex', expireAfterSeconds: 1800 });
    const records = new LocalCollections(engine).find(SESSIONS_NS);
    assert.deepEqual(records.map((r) => Object.keys(r)), [['_id', 'lastUse'], ['_id', 'lastUse']]);
    assert.ok(records.every((r) => (r.lastUse as Date).getTime() >= before));
    assert.deepEqual((await sessions.findRemovedSessions([a, b, c])).map(sessionKey), [sessionKey(c)]);
    await sessions.removeRecords([a]);
    assert.deepEqual((await sessions.findRemovedSessions([a, b, c])).map(sessionKey), [sessionKey(a), sessionKey(c)]);
    await sessions.refreshSessions([b]);
    assert.equal(new LocalCollections(engine).find(SESSIONS_NS).length, 1, 'a refresh updates the record in place');
  }));
});
