import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { MongoError } from '../base/errors.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { equalities, withEngine } from '../storage/test_support.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { LogicalClock } from './logical_clock.js';
import { SessionCatalog, TRANSACTIONS_NS, TRANSACTION_HISTORY_NS } from './session_catalog.js';
import { sessionIdOf } from './session_id.js';

const lsid = sessionIdOf({ id: new UUID() });

describe('the session catalog', () => {
  it('records what statements did in their write unit, and finds it again after a restart', withEngine(async (engine, dir) => {
    {
      const catalog = new SessionCatalog(engine, new LogicalClock(Date.now));
      engine.write((unit) => {
        const run = catalog.begin(unit, lsid, 3, 't.c');
        assert.equal(run.executed(0), undefined);
        run.record(0, { op: 'insert' });
        run.record(1, { op: 'update', n: 1, nModified: 1 });
        run.finish();
      });
      await engine.close();
      const after = StorageEngine.open(dir, { compilePartialFilter: equalities });
      const again = new SessionCatalog(after, new LogicalClock(Date.now));
      after.write((unit) => {
        const run = again.begin(unit, lsid, 3, 't.c');
        assert.deepEqual(run.executed(1), { op: 'update', n: 1, nModified: 1 });
        assert.equal(run.executed(2), undefined);
        assert.deepEqual(run.retriedStmtIds, [1]);
      });
      const [record] = new LocalCollections(after).find(TRANSACTIONS_NS);
      assert.equal(Number(record!.txnNum), 3);
      assert.deepEqual(Object.keys(record!), ['_id', 'txnNum', 'lastWriteOpTime', 'lastWriteDate', 'ns', 'stmts']);
      await after.close();
    }
  }));

  it('a newer txnNumber drops the older history; an older one is refused with TransactionTooOld', withEngine((engine) => {
    {
      const catalog = new SessionCatalog(engine, new LogicalClock(Date.now));
      const local = new LocalCollections(engine);
      // Two commands of txnNumber 1: the first's statements go in the record, the second's in a history entry.
      engine.write((unit) => { const run = catalog.begin(unit, lsid, 1, 't.c'); run.record(0, { op: 'insert' }); run.finish(); });
      engine.write((unit) => { const run = catalog.begin(unit, lsid, 1, 't.c'); run.record(1, { op: 'insert' }); run.finish(); });
      assert.deepEqual(local.find(TRANSACTION_HISTORY_NS).map((d) => Number((d._id as { txnNum: number }).txnNum)), [1]);
      engine.write((unit) => { const run = catalog.begin(unit, lsid, 2, 't.c'); run.record(0, { op: 'delete', n: 1 }); run.finish(); });
      assert.deepEqual(local.find(TRANSACTION_HISTORY_NS), [], 'txnNumber 2 dropped the history of 1');
      const reloaded = new SessionCatalog(engine, new LogicalClock(Date.now));
      engine.write((unit) => assert.deepEqual(reloaded.begin(unit, lsid, 2, 't.c').executed(0), { op: 'delete', n: 1 }));
      assert.throws(() => engine.write((unit) => catalog.begin(unit, lsid, 1, 't.c')), (e: unknown) => e instanceof MongoError && e.code === 225);
    }
  }));

  it('a write unit that fails leaves neither the record nor the memory of its statements', withEngine((engine) => {
    {
      const catalog = new SessionCatalog(engine, new LogicalClock(Date.now));
      assert.throws(() => engine.write((unit) => {
        const run = catalog.begin(unit, lsid, 5, 't.c');
        run.record(0, { op: 'insert' });
        run.finish();
        throw new Error('the write failed');
      }));
      engine.write((unit) => assert.equal(catalog.begin(unit, lsid, 5, 't.c').executed(0), undefined));
      assert.equal(new LocalCollections(engine).find(TRANSACTIONS_NS).length, 0);
    }
  }));

  // Found by the crash matrix: a range moved A -> B -> A brought back statements A had written
  // itself, and a donor holding one statement in a record and in a history entry sent it twice;
  // the second copy's history entry collided with the first (E11000) and the commit stalled.
  it('a migration skips the statements the recipient already knows', withEngine((engine) => {
    {
      const catalog = new SessionCatalog(engine, new LogicalClock(Date.now));
      const local = new LocalCollections(engine);
      const migrationId = new UUID();
      engine.write((unit) => { const run = catalog.begin(unit, lsid, 5, 't.c'); run.record(0, { op: 'insert' }); run.record(1, { op: 'insert' }); run.finish(); });
      const stmt = (stmtId: number) => ({ stmtId, op: 'insert', key: { k: stmtId } });
      const entry = (...ids: number[]) => ({ lsid: { id: lsid.id }, txnNum: 5, stmts: ids.map(stmt) });
      engine.write((unit) => catalog.applyMigratedHistory(unit, 't.c', migrationId, [entry(0, 1), entry(0, 1)]));
      assert.deepEqual(local.find(TRANSACTION_HISTORY_NS), [], 'nothing new arrived');
      engine.write((unit) => catalog.applyMigratedHistory(unit, 't.c', migrationId, [entry(1, 2), entry(2)]));
      const history = local.find(TRANSACTION_HISTORY_NS);
      assert.deepEqual(history.map((h) => [Number((h._id as { stmtId: number }).stmtId), (h.stmts as { stmtId: number }[]).map((st) => st.stmtId)]), [[2, [2]]]);
      engine.write((unit) => assert.deepEqual(catalog.begin(unit, lsid, 5, 't.c').executed(2), { op: 'insert' }));
    }
  }));
});
