import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp, UUID } from 'bson';
import { MongoError } from '../base/errors.js';
import type { DatabaseType, ShardType } from '../catalog/type_chunk.js';
import {
  checkMovePrimaryRequest, checkNoOrphans, collectionsToClone, commitMovePrimary, decideMovePrimary, type MovePrimaryCommit, type MovePrimaryRequest,
} from './move_primary.js';

const t = new Timestamp({ t: 10, i: 1 });
const uuid = new UUID();
const shard = (id: string, draining = false): ShardType => ({ _id: id, host: `h:${id}`, state: 1, topologyTime: t, ...(draining ? { draining: true } : {}) });
const database: DatabaseType = { _id: 'd', primary: 's0', version: { uuid, timestamp: t, lastMod: 3 } };
const shards = [shard('s0'), shard('s1'), shard('s2', true)];

function request(over: Partial<MovePrimaryRequest>): MovePrimaryRequest {
  return { db: 'd', to: 's1', database, shards, ...over };
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

const commit: MovePrimaryCommit = { db: 'd', from: 's0', to: 's1', expectedDatabaseVersion: database.version };

describe('movePrimary decisions', () => {
  it('starts a move from the current primary to an existing shard', () => {
    assert.deepEqual(decideMovePrimary(request({})), { kind: 'start', from: 's0', to: 's1' });
  });

  it('is a no-op when the shard is already primary', () => {
    assert.deepEqual(decideMovePrimary(request({ to: 's0' })), { kind: 'noop' });
  });

  it('answers MongoDB\'s errors for unknown, draining and missing targets and bad databases', () => {
    assert.throws(() => decideMovePrimary(request({ to: 'nope' })), code(70, /^Requested primary shard nope does not exist$/));
    assert.throws(() => decideMovePrimary(request({ to: 's2' })), code(70, /^Requested primary shard s2 is draining$/));
    assert.throws(() => decideMovePrimary(request({ database: undefined })), code(26, /^database d not found$/));
    assert.throws(() => decideMovePrimary(request({ db: 'config' })), code(72, /^Can't move primary for config database$/));
    assert.throws(() => decideMovePrimary(request({ db: 'a.b' })), code(73));
    assert.throws(() => decideMovePrimary(request({ to: '' })), code(72, /you have to specify where you want to move it/));
  });

  it('the router refuses a bad request before it looks the database up', () => {
    assert.throws(() => checkMovePrimaryRequest('admin', 's1'), code(72));
    assert.throws(() => checkMovePrimaryRequest('a b', 's1'), code(73));
    checkMovePrimaryRequest('d', 's1');
  });
});

describe('what movePrimary copies', () => {
  it('takes unsharded non-system collections; sharded ones only get their catalog entry', () => {
    const listed = [{ name: 'b', type: 'collection' }, { name: 'system.profile', type: 'collection' }, { name: 'a' }, { name: 's', type: 'collection' }, { name: 'v', type: 'view' }];
    assert.deepEqual(collectionsToClone(listed, ['s']), { unsharded: ['a', 'b'], sharded: ['s'] });
  });

  it('refuses when the recipient already holds one of them', () => {
    assert.throws(() => checkNoOrphans('d', 's1', ['a', 'b'], ['x', 'b']), code(48, /^Found orphaned collection d.b on recipient s1$/));
    checkNoOrphans('d', 's1', ['a'], ['x']);
  });
});

describe('the movePrimary commit', () => {
  it('names the recipient and bumps lastMod, keeping uuid and timestamp', () => {
    const committed = commitMovePrimary(database, commit);
    assert.equal(committed?.primary, 's1');
    assert.deepEqual(committed?.version, { uuid, timestamp: t, lastMod: 4 });
  });

  it('sent again after it committed, changes nothing', () => {
    assert.equal(commitMovePrimary({ ...database, primary: 's1', version: { ...database.version, lastMod: 4 } }, commit), undefined);
  });

  it('refuses when the database changed or vanished since the move started', () => {
    assert.throws(() => commitMovePrimary(undefined, commit), code(117));
    assert.throws(() => commitMovePrimary({ ...database, version: { ...database.version, lastMod: 5 } }, commit), code(117));
    assert.throws(() => commitMovePrimary({ ...database, primary: 's2' }, commit), code(117));
    assert.throws(() => commitMovePrimary({ ...database, version: { ...database.version, uuid: new UUID() } }, commit), code(117));
  });
});
