import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { LocalCollections } from '../query/exec/local_collection.js';
import { withEngine } from '../storage/test_support.js';
import { LogicalClock } from './logical_clock.js';
import { IMAGE_COLLECTION_NS, SessionCatalog, TRANSACTION_HISTORY_NS, TRANSACTIONS_NS } from './session_catalog.js';
import { lsidDoc, sameSession, sessionIdOf, type LogicalSessionId } from './session_id.js';
import { LocalSessionsCollection } from './sessions_collection.js';
import { reapSessionsOlderThan } from './transaction_reaper.js';
import { systemClock } from '../base/clock.js';

const HOUR = 60 * 60 * 1000;

describe('the transaction reaper', () => {
  it("removes a session's retryable-write records once its last write is old and it is gone from config.system.sessions, and only then", withEngine(async (engine) => {
    const catalog = new SessionCatalog(engine, new LogicalClock(Date.now));
    const local = new LocalCollections(engine);
    const [gone, live, recent, inUse] = [0, 1, 2, 3].map(() => sessionIdOf({ id: new UUID() }));
    const write = (lsid: LogicalSessionId, txnNumber: number, stmtId = 0): void => engine.write((unit) => {
      const run = catalog.begin(unit, lsid, txnNumber, 't.c');
      run.record(stmtId, { op: 'insert' });
      run.finish();
    });
    // Two commands each: the record, and a history entry.
    for (const lsid of [gone, live, recent, inUse]) for (const stmtId of [0, 1]) write(lsid, 5, stmtId);
    local.write((w) => {
      w.insert(IMAGE_COLLECTION_NS, { _id: lsidDoc(gone), txnNum: 5, imageKind: 'preImage', image: { _id: 1 } });
      for (const lsid of [gone, live, inUse]) w.update(TRANSACTIONS_NS, { _id: lsidDoc(lsid) }, { $set: { lastWriteDate: new Date(Date.now() - 2 * HOUR) } });
    });
    const sessions = new LocalSessionsCollection(engine, systemClock);
    await sessions.refreshSessions([live]);

    const reaped = await reapSessionsOlderThan(engine, catalog, sessions, new Date(Date.now() - HOUR), (lsid) => sameSession(lsid, inUse));
    assert.equal(reaped, 1);
    // A session's records, by its id: config.transactions' _id is the lsid, the history's holds it.
    const remaining = (ns: string) => local.find(ns).map((d) => {
      const id = d._id as { id?: unknown; lsid?: { id: unknown } };
      return JSON.stringify(id.id ?? id.lsid!.id);
    });
    const kept = [live, recent, inUse].map((l) => JSON.stringify(l.id)).sort();
    assert.deepEqual(remaining(TRANSACTIONS_NS).sort(), kept);
    assert.deepEqual(remaining(TRANSACTION_HISTORY_NS).sort(), kept);
    assert.deepEqual(local.find(IMAGE_COLLECTION_NS), []);
    // Memory forgot the session too: an older txnNumber is no longer TransactionTooOld.
    write(gone, 1);
    assert.throws(() => write(live, 1), { code: 225 });
  }));
});
