import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MongoError } from '../../base/errors.js';
import { mergeFilter, outputStageOf } from './stage_output.js';

function failsWith(pipeline: unknown[], code: number): void {
  assert.throws(() => outputStageOf(pipeline as never, 'db'), (err: unknown) => err instanceof MongoError && err.code === code);
}

describe('$out and $merge as both a node and a router read them', () => {
  it('finds no output stage in a pipeline that does not end in one', () => {
    assert.equal(outputStageOf([{ $match: {} }], 'db'), undefined);
    assert.equal(outputStageOf([], 'db'), undefined);
  });

  it('reads $out to a name in the same database or to {db, coll}', () => {
    assert.deepEqual(outputStageOf([{ $match: {} }, { $out: 'o' }], 'db'), { kind: '$out', db: 'db', coll: 'o' });
    assert.deepEqual(outputStageOf([{ $out: { db: 'other', coll: 'o' } }], 'db'), { kind: '$out', db: 'other', coll: 'o' });
    failsWith([{ $out: 3 }], 9);
    failsWith([{ $out: '' }], 9);
  });

  it('reads $merge with MongoDB defaults: on _id, merge when matched, insert when not', () => {
    assert.deepEqual(outputStageOf([{ $merge: 'm' }], 'db'), { kind: '$merge', db: 'db', coll: 'm', on: ['_id'], whenMatched: 'merge', whenNotMatched: 'insert' });
    assert.deepEqual(
      outputStageOf([{ $merge: { into: { db: 'x', coll: 'm' }, on: ['a', 'b'], whenMatched: 'keepExisting', whenNotMatched: 'discard' } }], 'db'),
      { kind: '$merge', db: 'x', coll: 'm', on: ['a', 'b'], whenMatched: 'keepExisting', whenNotMatched: 'discard' },
    );
    assert.deepEqual(outputStageOf([{ $merge: { into: 'm', on: 'a' } }], 'db'), { kind: '$merge', db: 'db', coll: 'm', on: ['a'], whenMatched: 'merge', whenNotMatched: 'insert' });
  });

  it('refuses modes MongoDB does not know with BadValue, a bad on with 51186, and whenMatched pipelines as not implemented', () => {
    failsWith([{ $merge: { into: 'm', whenMatched: 'overwrite' } }], 2);
    failsWith([{ $merge: { into: 'm', whenNotMatched: 'upsert' } }], 2);
    failsWith([{ $merge: { into: 'm', on: [] } }], 51186);
    failsWith([{ $merge: { into: 'm', on: [1] } }], 51186);
    failsWith([{ $merge: { into: 'm', whenMatched: [{ $set: { a: 1 } }] } }], 238);
  });

  it('matches a result on its on fields, a missing one as null', () => {
    assert.deepEqual(mergeFilter({ _id: 1, a: 2 }, ['a', 'b']), { a: 2, b: null });
  });
});
