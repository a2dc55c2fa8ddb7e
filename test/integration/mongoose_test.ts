import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import mongoose from 'mongoose';
import type { Up } from '../helpers/spawn_up.js';
import { withProcesses } from '../helpers/fixtures.js';

// An ODM's transactions against the README's cluster: Mongoose's connection.transaction() runs
// its callback in the driver's withTransaction, with its own session bookkeeping on top (documents
// created in an aborted attempt are reset), so it is the shape applications actually use.
describe('Mongoose against `docshard up`', () => {
  let up: Up;
  let connection: mongoose.Connection;
  const accountSchema = new mongoose.Schema({ _id: Number, owner: String, balance: Number });
  let Account: mongoose.Model<mongoose.InferSchemaType<typeof accountSchema>>;

  withProcesses(async (p) => {
    up = await p.up(2);
    connection = await mongoose.createConnection(`${up.uri}/bank`).asPromise();
    p.beforeStop(() => connection.close());
    Account = connection.model('Account', accountSchema, 'accounts');
    const admin = connection.getClient().db('admin');
    await admin.command({ enableSharding: 'bank' });
    await admin.command({ shardCollection: 'bank.accounts', key: { _id: 1 } });
    await admin.command({ split: 'bank.accounts', middle: { _id: 100 } });
    const { shards } = await admin.command({ listShards: 1 });
    await admin.command({ moveChunk: 'bank.accounts', find: { _id: 100 }, to: shards[1]._id, _waitForDelete: true });
  });

  it('commits a transaction of creates and updates run by connection.transaction()', { timeout: 120_000 }, async () => {
    await Account.create([{ _id: 1, owner: 'ada', balance: 100 }, { _id: 2, owner: 'bob', balance: 0 }]);
    await connection.transaction(async (session) => {
      await Account.updateOne({ _id: 1 }, { $inc: { balance: -30 } }, { session });
      await Account.updateOne({ _id: 2 }, { $inc: { balance: 30 } }, { session });
      const inside = await Account.find({}, null, { session }).sort({ _id: 1 }).lean();
      assert.deepEqual(inside.map((a) => a.balance), [70, 30], 'the transaction sees its own writes');
      const outside = await Account.findById(1).lean();
      assert.equal(outside?.balance, 100, 'others do not see them before the commit');
    });
    const after = await Account.find({}).sort({ _id: 1 }).lean();
    assert.deepEqual(after.map((a) => a.balance), [70, 30]);
  });

  it('rolls everything back when the callback throws, and the error reaches the caller', { timeout: 120_000 }, async () => {
    await assert.rejects(connection.transaction(async (session) => {
      await Account.create([{ _id: 3, owner: 'cy', balance: 5 }], { session });
      await Account.updateOne({ _id: 1 }, { $set: { balance: 0 } }, { session });
      throw new Error('changed my mind');
    }), /changed my mind/);
    assert.equal(await Account.countDocuments({ _id: 3 }), 0);
    assert.equal((await Account.findById(1).lean())?.balance, 70);
  });

  it('reads across both shards in one snapshot inside a transaction', { timeout: 120_000 }, async () => {
    await Account.create([{ _id: 150, owner: 'dee', balance: 7 }]);
    const total = await connection.transaction(async (session) => {
      const all = await Account.find({}, null, { session }).lean();
      await Account.updateOne({ _id: 150 }, { $inc: { balance: 1 } }, { session });
      return all.reduce((sum, a) => sum + (a.balance ?? 0), 0);
    });
    assert.equal(total, 107);
    assert.equal((await Account.findById(150).lean())?.balance, 8);
  });
});
