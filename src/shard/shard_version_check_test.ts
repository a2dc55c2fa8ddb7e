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

  it('answers StaleConfig with both versions when the router is behind', () => {
    const d = checkShardVersion('d.c', 's0', v(1, 0), sharded(2, 0), true);
    assert.equal(d.kind, 'stale');
    if (d.kind !== 'stale') return;
    assert.equal(d.error.code, ErrorCodes.StaleConfig);
    assert.equal(d.error.extra.ns, 'd.c');
    assert.equal(d.error.extra.shardId, 's0');
    assert.ok(d.error.extra.vReceived && d.error.extra.vWanted);
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
});
