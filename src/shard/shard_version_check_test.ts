import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp, UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { chunkVersion, unshardedVersion } from '../catalog/chunk_version.js';
import { checkDatabaseVersion, checkShardVersion } from './shard_version_check.js';

const epoch = new ObjectId();
const ts = new Timestamp({ t: 100, i: 1 });
const v = (major: number, minor: number) => chunkVersion(epoch, ts, major, minor);
const sharded = (major: number, minor: number) => ({ kind: 'sharded' as const, version: v(major, minor) });

describe('the shard version check', () => {
  it('accepts the same major version whatever the minor (splits do not move data)', () => {
    assert.equal(checkShardVersion('d.c', 's0', v(2, 0), sharded(2, 5), true).kind, 'ok');
  });

  it('asks for a refresh when the router knows a newer major version', () => {
    assert.equal(checkShardVersion('d.c', 's0', v(3, 0), sharded(2, 0), true).kind, 'refresh');
  });

  it('answers StaleConfig when the router is behind, with ns, vReceived, vWanted and shardId as MongoDB serializes StaleConfigInfo', () => {
    const d = checkShardVersion('d.c', 's0', v(1, 3), sharded(2, 1), true);
    assert.equal(d.kind === 'stale' && d.error.code, ErrorCodes.StaleConfig);
    if (d.kind !== 'stale') return;
    assert.deepEqual(d.error.extra, {
      ns: 'd.c',
      vReceived: { e: epoch, t: ts, v: new Timestamp({ t: 1, i: 3 }) },
      vWanted: { e: epoch, t: ts, v: new Timestamp({ t: 2, i: 1 }) },
      shardId: 's0',
    });
  });

  it('leaves vWanted out of StaleConfig when the shard has no metadata, and wants UNSHARDED when it knows the collection is unsharded', () => {
    const unknown = checkShardVersion('d.c', 's1', v(1, 0), { kind: 'unknown' }, false);
    assert.equal(unknown.kind, 'stale');
    if (unknown.kind !== 'stale') return;
    assert.deepEqual(unknown.error.extra, { ns: 'd.c', vReceived: { e: epoch, t: ts, v: new Timestamp({ t: 1, i: 0 }) }, shardId: 's1' });

    const unsharded = checkShardVersion('d.c', 's1', v(1, 0), { kind: 'unsharded' }, false);
    assert.equal(unsharded.kind, 'stale');
    if (unsharded.kind !== 'stale') return;
    assert.deepEqual(unsharded.error.extra.vWanted, { e: new ObjectId('000000000000000000000000'), t: new Timestamp({ t: 0, i: 0 }), v: new Timestamp({ t: 0, i: 0 }) });
  });

  it('turns a refresh into StaleConfig once the shard has refreshed and is still older', () => {
    assert.equal(checkShardVersion('d.c', 's0', v(3, 0), sharded(2, 0), false).kind, 'stale');
  });

  it('orders different generations by timestamp', () => {
    const newer = chunkVersion(new ObjectId(), new Timestamp({ t: 200, i: 1 }), 1, 0);
    assert.equal(checkShardVersion('d.c', 's0', newer, sharded(5, 0), true).kind, 'refresh');
    assert.equal(checkShardVersion('d.c', 's0', v(5, 0), { kind: 'sharded', version: newer }, true).kind, 'stale');
  });

  it('refreshes unknown metadata, and rejects UNSHARDED for a sharded collection', () => {
    assert.equal(checkShardVersion('d.c', 's0', v(1, 0), { kind: 'unknown' }, true).kind, 'refresh');
    assert.equal(checkShardVersion('d.c', 's0', unshardedVersion(), sharded(1, 0), true).kind, 'stale');
    assert.equal(checkShardVersion('d.c', 's0', unshardedVersion(), { kind: 'unsharded' }, true).kind, 'ok');
  });
});

describe('the database version check', () => {
  const uuid = new UUID();
  const dbv = (lastMod: number) => ({ uuid, timestamp: ts, lastMod });

  it('accepts the primary shard current version and refreshes on a newer one', () => {
    assert.equal(checkDatabaseVersion('d', dbv(1), { kind: 'primary', version: dbv(1) }, true).kind, 'ok');
    assert.equal(checkDatabaseVersion('d', dbv(2), { kind: 'primary', version: dbv(1) }, true).kind, 'refresh');
  });

  it('answers StaleDbVersion to an older version or on a shard that is not primary', () => {
    const older = checkDatabaseVersion('d', dbv(1), { kind: 'primary', version: dbv(2) }, true);
    assert.equal(older.kind === 'stale' && older.error.code, ErrorCodes.StaleDbVersion);
    assert.equal(checkDatabaseVersion('d', dbv(1), { kind: 'notPrimary' }, false).kind, 'stale');
  });

  it('puts db, vReceived and vWanted in StaleDbVersion as MongoDB serializes StaleDbRoutingVersion', () => {
    const older = checkDatabaseVersion('d', dbv(1), { kind: 'primary', version: dbv(2) }, true);
    assert.equal(older.kind, 'stale');
    if (older.kind !== 'stale') return;
    assert.equal(older.error.codeName, 'StaleDbVersion');
    assert.deepEqual(older.error.extra, {
      db: 'd',
      vReceived: { uuid, timestamp: ts, lastMod: 1 },
      vWanted: { uuid, timestamp: ts, lastMod: 2 },
    });
  });

  it('leaves vWanted out of StaleDbVersion on a shard that is not the primary', () => {
    const notPrimary = checkDatabaseVersion('d', dbv(3), { kind: 'notPrimary' }, false);
    assert.equal(notPrimary.kind, 'stale');
    if (notPrimary.kind !== 'stale') return;
    assert.deepEqual(notPrimary.error.extra, { db: 'd', vReceived: { uuid, timestamp: ts, lastMod: 3 } });
  });
});
