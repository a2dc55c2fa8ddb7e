import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkFindOptions, describeQuery, notCappedError, showRecordIdProjection, tailableMode, type FindOptions } from './query_request_helper.js';

const plain: FindOptions = { tailable: 'normal', sort: undefined, singleBatch: false, min: undefined, max: undefined };

function refused(fn: () => void, code: number, message: string): void {
  assert.throws(fn, (err: { code: number; message: string }) => {
    assert.equal(err.code, code);
    assert.equal(err.message, message);
    return true;
  });
}

describe('find options', () => {
  it('awaitData needs tailable', () => {
    assert.equal(tailableMode(false, false), 'normal');
    assert.equal(tailableMode(true, false), 'tailable');
    assert.equal(tailableMode(true, true), 'tailableAndAwaitData');
    refused(() => tailableMode(false, true), 9, "Cannot set 'awaitData' without also setting 'tailable'");
  });

  it('a tailable cursor takes no sort but {$natural: 1}, and never one batch', () => {
    checkFindOptions({ ...plain, tailable: 'tailable', sort: { $natural: 1 } });
    checkFindOptions({ ...plain, tailable: 'tailable', sort: {} });
    checkFindOptions({ ...plain, sort: { a: 1 }, singleBatch: true });
    refused(() => checkFindOptions({ ...plain, tailable: 'tailable', sort: { a: 1 } }), 2, 'cannot use tailable option with a sort other than {$natural: 1}');
    refused(() => checkFindOptions({ ...plain, tailable: 'tailableAndAwaitData', sort: { $natural: -1 } }), 2, 'cannot use tailable option with a sort other than {$natural: 1}');
    refused(() => checkFindOptions({ ...plain, tailable: 'tailable', singleBatch: true }), 2, "cannot use tailable option with the 'singleBatch' option");
  });

  it('min and max name the same fields', () => {
    checkFindOptions({ ...plain, min: { a: 1, b: 1 }, max: { a: 5, b: 0 } });
    refused(() => checkFindOptions({ ...plain, min: { a: 1 }, max: { b: 5 } }), 51176, 'min and max must have the same field names');
    refused(() => checkFindOptions({ ...plain, min: { a: 1 }, max: { a: 5, b: 0 } }), 51176, 'min and max must have the same field names');
  });

  it('showRecordId projects $recordId after the rest, unless the projection does', () => {
    assert.deepEqual(showRecordIdProjection(undefined), { $recordId: { $meta: 'recordId' } });
    assert.deepEqual(Object.keys(showRecordIdProjection({ a: 1, b: 0 })), ['a', 'b', '$recordId']);
    assert.deepEqual(showRecordIdProjection({ $recordId: 0 }), { $recordId: 0 });
  });
});

describe('queries in error messages', () => {
  it('reads as mongod writes a canonical query', () => {
    // The text MongoDB 7.0 answers a tailable find on a non-capped collection with (as FerretDB's
    // compatibility tests record it).
    assert.equal(notCappedError({ ns: 'db.c', filter: {}, sort: undefined, projection: undefined }).message,
      'error processing query: ns=db.cTree: $and\nSort: {}\nProj: {}\n tailable cursor requested on non capped collection');
    assert.equal(describeQuery({ ns: 'db.c', filter: { a: 1 }, sort: { a: 1 }, projection: { b: 0 }, batchSize: 2, limit: 3 }),
      'ns=db.c batchSize=2 limit=3Tree: a $eq 1\nSort: { a: 1 }\nProj: { b: 0 }\n');
    assert.equal(describeQuery({ ns: 'db.c', filter: { a: { $gt: 1 }, b: 'x' }, sort: undefined, projection: undefined }),
      'ns=db.cTree: $and\n    a $gt 1\n    b $eq "x"\nSort: {}\nProj: {}\n');
  });
});
