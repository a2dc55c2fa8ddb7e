import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import type { ShardType } from '../catalog/type_chunk.js';
import { parseConnectionString } from '../client/connection_string.js';
import { checkShardIdentity, checkShardName, existingShardFor, validateHostAsShard } from './add_shard.js';

const t = new Timestamp({ t: 1, i: 1 });
const shard = (id: string, host: string, maxSize?: number): ShardType => ({ _id: id, host, state: 1, topologyTime: t, ...(maxSize === undefined ? {} : { maxSize }) });

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

const primaryHello = { ok: 1, isWritablePrimary: true, setName: 'rs0', hosts: ['a:1', 'b:2', 'c:3'], primary: 'a:1' };

describe('addShard validateHostAsShard', () => {
  it('stores a set as its name and every member its primary reports, and names the shard after the set', () => {
    const v = validateHostAsShard(parseConnectionString('rs0/b:2'), { ...primaryHello, passives: ['d:4'], arbiters: ['e:5'] });
    assert.deepEqual(v, { host: 'rs0/a:1,b:2,c:3,d:4', defaultName: 'rs0' });
  });

  it('keeps a standalone as given, without a default name', () => {
    assert.deepEqual(validateHostAsShard(parseConnectionString('h:1'), { ok: 1, isWritablePrimary: true }), { host: 'h:1', defaultName: undefined });
  });

  it('refuses a set name its members do not report (OperationFailed)', () => {
    assert.throws(() => validateHostAsShard(parseConnectionString('other/a:1'), primaryHello), code(96, /does not match the actual set name rs0/));
  });

  it('refuses a standalone given with a set name, and a member given without one', () => {
    assert.throws(() => validateHostAsShard(parseConnectionString('rs0/h:1'), { ok: 1, isWritablePrimary: true }), code(96, /did not return a set name/));
    assert.throws(() => validateHostAsShard(parseConnectionString('a:1'), primaryHello), code(96, /part of set rs0; use replica set url format/));
  });

  it('refuses a seed that is no member of the set, arbiters and passives counting as members', () => {
    assert.throws(() => validateHostAsShard(parseConnectionString('rs0/a:1,z:9'), primaryHello), code(96, /host z:9 does not belong to replica set rs0/));
    assert.doesNotThrow(() => validateHostAsShard(parseConnectionString('rs0/a:1,e:5'), { ...primaryHello, arbiters: ['e:5'] }));
  });

  it('refuses a set without a primary, and a router', () => {
    assert.throws(() => validateHostAsShard(parseConnectionString('rs0/a:1'), { ...primaryHello, isWritablePrimary: false }), code(10107));
    assert.throws(() => validateHostAsShard(parseConnectionString('h:1'), { ok: 1, isWritablePrimary: true, msg: 'isdbgrid' }), code(20));
  });
});

describe('addShard against the catalog', () => {
  const shards = [shard('rs0', 'rs0/a:1,b:2,c:3'), shard('s1', 'h:1', 100)];

  it('answers the shard already added with the same set, name and maxSize', () => {
    assert.equal(existingShardFor({ connectionString: parseConnectionString('rs0/c:3'), name: undefined, maxSizeMB: undefined }, shards)?._id, 'rs0');
    assert.equal(existingShardFor({ connectionString: parseConnectionString('h:1'), name: 's1', maxSizeMB: 100 }, shards)?._id, 's1');
    assert.equal(existingShardFor({ connectionString: parseConnectionString('rs1/x:1'), name: undefined, maxSizeMB: undefined }, shards), undefined);
  });

  it('refuses the same set under another name, a host of another shard, and a name taken', () => {
    assert.throws(() => existingShardFor({ connectionString: parseConnectionString('rs0/a:1'), name: 'other', maxSizeMB: undefined }, shards), code(20, /containing the replica set 'rs0'/));
    assert.throws(() => existingShardFor({ connectionString: parseConnectionString('rs9/b:2'), name: undefined, maxSizeMB: undefined }, shards), code(20, /'b:2' is already a member of the existing shard 'rs0\/a:1,b:2,c:3'/));
    assert.throws(() => existingShardFor({ connectionString: parseConnectionString('h:1'), name: 's1', maxSizeMB: undefined }, shards), code(20));
    assert.throws(() => existingShardFor({ connectionString: parseConnectionString('n:1'), name: 's1', maxSizeMB: undefined }, shards), code(20, /A shard named s1 already exists/));
  });

  it('refuses a node that is the shard of another cluster, and the name config', () => {
    const mine = new ObjectId();
    assert.doesNotThrow(() => checkShardIdentity(undefined, mine));
    assert.doesNotThrow(() => checkShardIdentity({ _id: 'shardIdentity', clusterId: mine }, mine));
    assert.throws(() => checkShardIdentity({ _id: 'shardIdentity', clusterId: new ObjectId() }, mine), code(40372));
    assert.throws(() => checkShardName('config'), code(2));
  });
});
