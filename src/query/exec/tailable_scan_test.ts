import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long } from 'bson';
import type { Doc } from '../../bson/values.js';
import type { StorageEngine } from '../../storage/storage_engine.js';
import { withEngine } from '../../storage/test_support.js';
import type { FindSpec } from './find_query.js';
import { TailableScan } from './tailable_scan.js';

function capped(engine: StorageEngine, max: number) {
  return engine.createCollection('t.cap', { capped: true, size: 1 << 20, max });
}

function insert(engine: StorageEngine, ...docs: Doc[]): void {
  const coll = engine.getCollection('t.cap')!;
  engine.write((unit) => docs.forEach((d) => unit.insert(coll, d)));
}

// What the scan has now, as a getMore would read it.
function batch(scan: TailableScan): unknown[] {
  scan.restore();
  return [...scan].map((r) => r.doc._id);
}

function tail(engine: StorageEngine, spec: Partial<FindSpec> = {}): TailableScan {
  return new TailableScan(engine, engine.getCollection('t.cap')!, { filter: {}, ...spec });
}

describe('a tailable scan of a capped collection', () => {
  it('returns what is there, then what is inserted later, in insertion order', withEngine((engine) => {
    capped(engine, 100);
    insert(engine, { _id: 'b' }, { _id: 'a' });
    const scan = tail(engine);
    assert.deepEqual([...scan].map((r) => r.doc._id), ['b', 'a']);
    assert.deepEqual(batch(scan), [], 'nothing new');
    insert(engine, { _id: 'c' });
    insert(engine, { _id: 0 });
    assert.deepEqual(batch(scan), ['c', 0]);
  }));

  it('applies the filter, skip, limit and projection across batches', withEngine((engine) => {
    capped(engine, 100);
    insert(engine, { _id: 1, x: 1 }, { _id: 2, x: 0 }, { _id: 3, x: 1 });
    const scan = tail(engine, { filter: { x: 1 }, skip: 1, limit: 2, projection: { x: 0 }, showRecordId: true });
    assert.deepEqual([...scan].map((r) => r.doc), [{ _id: 3, $recordId: Long.fromNumber(3) }]);
    insert(engine, { _id: 4, x: 0 }, { _id: 5, x: 1 }, { _id: 6, x: 1 });
    assert.deepEqual(batch(scan), [5], 'the limit counts every batch');
    assert.deepEqual(batch(scan), []);
  }));

  it('has no index key to return: returnKey gives {}', withEngine((engine) => {
    capped(engine, 100);
    insert(engine, { _id: 1 });
    assert.deepEqual([...tail(engine, { returnKey: true })].map((r) => r.doc), [{}]);
  }));

  it('dies with CappedPositionLost once the collection has deleted the record it stopped at', withEngine((engine) => {
    capped(engine, 2);
    insert(engine, { _id: 1, x: 0 }, { _id: 2, x: 0 });
    const scan = tail(engine, { filter: { x: 1 } });
    assert.deepEqual([...scan], []);
    insert(engine, { _id: 3, x: 0 });
    assert.deepEqual(batch(scan), [], 'record 2, where the scan stopped, is still there');
    insert(engine, { _id: 4, x: 1 }, { _id: 5, x: 1 });
    assert.throws(() => scan.restore(), (err: { code: number; message: string }) => {
      assert.equal(err.code, 136);
      assert.equal(err.message, 'CollectionScan died due to failure to restore tailable cursor position. Last seen record id: RecordId(3)');
      return true;
    });
  }));

  it('dies with QueryPlanKilled when its collection is dropped, even if one of the same name replaces it', withEngine((engine) => {
    capped(engine, 10);
    insert(engine, { _id: 1 });
    const scan = tail(engine);
    [...scan];
    engine.dropCollection('t.cap');
    capped(engine, 10);
    insert(engine, { _id: 1 });
    assert.throws(() => scan.restore(), { code: 175 });
  }));
});
