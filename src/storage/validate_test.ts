import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { recordKey } from './key_layout.js';
import { withEngine } from './test_support.js';
import { validateCollection } from './validate.js';

describe('validateCollection', () => {
  it('finds nothing wrong in a collection written through the write path', withEngine((engine) => {
    const coll = engine.createCollection('t.c');
    engine.createIndexes(coll, [{ v: 2, key: { tags: 1 }, name: 'tags_1' }]);
    engine.write((unit) => {
      for (let i = 0; i < 20; i++) unit.insert(coll, { _id: i, tags: [i, i + 1] });
    });
    const report = validateCollection(engine, coll);
    assert.equal(report.nrecords, 20);
    assert.deepEqual(report.keysPerIndex, { _id_: 20, tags_1: 40 });
    assert.deepEqual([report.corruptRecords, report.missingIndexEntries, report.extraIndexEntries, report.statsMismatch], [[], [], [], undefined]);
  }));

  it('reports index entries missing or left over, corrupt records and stored statistics out of step', withEngine((engine) => {
    const coll = engine.createCollection('t.c');
    engine.createIndexes(coll, [{ v: 2, key: { a: 1 }, name: 'a_1' }]);
    const ids = engine.write((unit) => [1, 2, 3].map((i) => unit.insert(coll, { _id: i, a: i })));
    const index = coll.index('a_1')!;
    const keyOf = (a: number) => index.keysFor({ a }).keys;
    // Damage done below the write path, as a bug or a bad disk would.
    engine.kv.writeSync((w) => {
      index.removeEntries(w, keyOf(2), ids[1]!);
      index.insertEntries(w, keyOf(99), ids[2]!);
      w.space(coll.space).put(recordKey(ids[0]!), Buffer.from([5, 0, 0, 0, 1]));
      engine.stats.apply(w, coll.entry.id, 1, 0);
    });
    const report = validateCollection(engine, coll);
    assert.deepEqual(report.corruptRecords, [ids[0]]);
    assert.deepEqual(report.missingIndexEntries.map((p) => [p.indexName, p.recordId]), [['a_1', ids[1]]]);
    // The corrupt record's own entries count as left over too: nothing readable gives them.
    assert.deepEqual(report.extraIndexEntries.map((p) => [p.indexName, p.recordId]).sort(), [['_id_', ids[0]], ['a_1', ids[0]], ['a_1', ids[2]]]);
    assert.equal(report.statsMismatch?.count, 4);
    assert.equal(report.nrecords, 3);
  }));
});
