import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Int32, Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { extractWriteConcern, needsOtherMembers, writeConcernToBson, type WriteConcernOptions } from './write_concern_options.js';

const MAJORITY_DEFAULT: WriteConcernOptions = { w: 'majority', sync: 'unset', wtimeout: 0, provenance: 'implicitDefault' };

function refused(writeConcern: unknown): { code: number; message: string } {
  try {
    extractWriteConcern({ insert: 'c', writeConcern }, MAJORITY_DEFAULT);
  } catch (e) {
    assert.ok(e instanceof MongoError);
    return { code: e.code, message: e.message };
  }
  assert.fail(`accepted ${JSON.stringify(writeConcern)}`);
}

test('no write concern, or an empty one, is the default', () => {
  assert.equal(extractWriteConcern({ insert: 'c' }, MAJORITY_DEFAULT), MAJORITY_DEFAULT);
  assert.equal(extractWriteConcern({ insert: 'c', writeConcern: {} }, MAJORITY_DEFAULT), MAJORITY_DEFAULT);
});

test('a client\'s write concern is parsed as MongoDB parses it', () => {
  assert.deepEqual(extractWriteConcern({ writeConcern: { w: new Int32(2), wtimeout: new Long(500) } }, MAJORITY_DEFAULT), { w: 2, sync: 'unset', wtimeout: 500, provenance: 'clientSupplied' });
  assert.deepEqual(extractWriteConcern({ writeConcern: { w: 'majority', j: true } }, MAJORITY_DEFAULT), { w: 'majority', sync: 'journal', wtimeout: 0, provenance: 'clientSupplied' });
  assert.deepEqual(extractWriteConcern({ writeConcern: { j: 1 } }, MAJORITY_DEFAULT), { w: 1, sync: 'journal', wtimeout: 0, provenance: 'clientSupplied' }, 'w defaults to 1 when only j is given');
  assert.deepEqual(extractWriteConcern({ writeConcern: { w: 0, j: false } }, MAJORITY_DEFAULT).sync, 'none');
  assert.deepEqual(extractWriteConcern({ writeConcern: { w: 1, fsync: true } }, MAJORITY_DEFAULT).sync, 'fsync');
});

test('bad write concerns get MongoDB\'s errors', () => {
  assert.equal(refused(5).code, 14);
  assert.deepEqual(refused({ w: -1 }), { code: 9, message: 'w has to be a non-negative number and not greater than 50' });
  assert.equal(refused({ w: 51 }).code, 9);
  assert.equal(refused({ w: 1.5 }).code, 9);
  assert.deepEqual(refused({ w: true }), { code: 9, message: 'w has to be a number or a string' });
  assert.deepEqual(refused({ j: true, fsync: true }), { code: 9, message: 'fsync and j options cannot be used together' });
  assert.equal(refused({ wtimeout: 'soon' }).code, 14);
  assert.equal(refused({ j: 'yes' }).code, 14);
  assert.equal(refused({ w: 1, provenance: 'mine' }).code, 2);
});

test('only w above 1 or a mode waits for other members', () => {
  assert.equal(needsOtherMembers({ ...MAJORITY_DEFAULT, w: 1 }), false);
  assert.equal(needsOtherMembers({ ...MAJORITY_DEFAULT, w: 0 }), false);
  assert.equal(needsOtherMembers({ ...MAJORITY_DEFAULT, w: 2 }), true);
  assert.equal(needsOtherMembers(MAJORITY_DEFAULT), true);
});

test('errors and replies show the write concern as MongoDB serialises it', () => {
  assert.deepEqual(writeConcernToBson(MAJORITY_DEFAULT), { w: 'majority', wtimeout: 0, provenance: 'implicitDefault' });
  assert.deepEqual(writeConcernToBson({ w: 2, sync: 'journal', wtimeout: 100, provenance: 'clientSupplied' }), { w: 2, j: true, wtimeout: 100, provenance: 'clientSupplied' });
  assert.deepEqual(writeConcernToBson({ w: 1, sync: 'none', wtimeout: 0, provenance: 'clientSupplied' }), { w: 1, j: false, wtimeout: 0, provenance: 'clientSupplied' });
});
