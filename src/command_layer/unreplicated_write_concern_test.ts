import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { refuseUnreplicatedWriteConcern, takeUnsatisfiableWriteConcern, withWriteConcernError } from './unreplicated_write_concern.js';

function nodeRefusal(writeConcern: unknown): string | undefined {
  try {
    refuseUnreplicatedWriteConcern({ insert: 'c', writeConcern });
    return undefined;
  } catch (err) {
    assert.ok(err instanceof MongoError);
    assert.equal(err.code, 2);
    return err.message;
  }
}

describe('a write concern that asks for replication', () => {
  it('is refused by a node as a standalone mongod refuses it', () => {
    assert.equal(nodeRefusal({ w: 2 }), "cannot use 'w' > 1 when a host is not replicated");
    assert.equal(nodeRefusal({ w: Long.fromNumber(3), wtimeout: 100 }), "cannot use 'w' > 1 when a host is not replicated");
    assert.equal(nodeRefusal({ w: 'dc1' }), 'cannot use non-majority \'w\' mode "dc1" when a host is not a member of a replica set');
  });

  it('is left alone when one process satisfies it', () => {
    for (const wc of [{ w: 1 }, { w: 0 }, { w: 'majority' }, { j: true }, { w: 1, wtimeout: 5 }, {}, undefined]) {
      assert.equal(nodeRefusal(wc), undefined, JSON.stringify(wc));
      const cmd = { insert: 'c', writeConcern: wc };
      assert.equal(takeUnsatisfiableWriteConcern(cmd), undefined);
      assert.equal(cmd.writeConcern, wc);
    }
  });

  it('is sent on by a router as w: 1, keeping the rest, with the error a one-member replica set gives', () => {
    const cmd: Record<string, unknown> = { insert: 'c', writeConcern: { w: 2, j: true } };
    const error = takeUnsatisfiableWriteConcern(cmd);
    assert.deepEqual(cmd.writeConcern, { w: 1, j: true });
    assert.deepEqual(error, {
      code: 100, codeName: 'UnsatisfiableWriteConcern', errmsg: 'Not enough data-bearing nodes',
      errInfo: { writeConcern: { w: 2, j: true, wtimeout: 0, provenance: 'clientSupplied' } },
    });
    const tagged = takeUnsatisfiableWriteConcern({ insert: 'c', writeConcern: { w: 'dc1', wtimeout: 50 } });
    assert.deepEqual(tagged, {
      code: 79, codeName: 'UnknownReplWriteConcern', errmsg: "No write concern mode named 'dc1' found in replica set configuration",
      errInfo: { writeConcern: { w: 'dc1', wtimeout: 50, provenance: 'clientSupplied' } },
    });
  });

  it('is reported by a router when the command applied something, as mongos reports it', () => {
    const wce = { code: 100 };
    const inserts = (ordered: boolean) => ({ insert: 'c', documents: [{}, {}], ordered });
    assert.deepEqual(withWriteConcernError(inserts(true), { n: 2, ok: 1 }, wce), { n: 2, ok: 1, writeConcernError: wce });
    assert.equal(withWriteConcernError(inserts(true), { n: 1, writeErrors: [{ index: 1 }], ok: 1 }, wce).writeConcernError, undefined, 'an ordered write stopped at an error');
    assert.equal(withWriteConcernError(inserts(false), { n: 1, writeErrors: [{ index: 0 }], ok: 1 }, wce).writeConcernError, wce, 'an unordered write applied one');
    assert.equal(withWriteConcernError(inserts(false), { n: 0, writeErrors: [{ index: 0 }, { index: 1 }], ok: 1 }, wce).writeConcernError, undefined, 'nothing applied');
    assert.equal(withWriteConcernError({ create: 'c' }, { ok: 0, code: 48 }, wce).writeConcernError, undefined, 'a failed command');
    assert.equal(withWriteConcernError({ create: 'c' }, { ok: 1 }, wce).writeConcernError, wce);
  });
});
