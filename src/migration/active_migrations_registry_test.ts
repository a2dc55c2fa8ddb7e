import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MinKey } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ActiveMigrationsRegistry, type DonateChunkRequest } from './active_migrations_registry.js';

const request: DonateChunkRequest = { nss: 'db.c', range: { min: { a: new MinKey() }, max: { a: 10 } }, fromShardId: 's0', toShardId: 's1', waitForDelete: false, forceJumbo: false };

function conflict(message: string) {
  return (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.ConflictingOperationInProgress && err.codeName === 'ConflictingOperationInProgress' && err.message === message;
}

const DONATING = "Unable to start new balancer operation because this shard is currently donating range 'min: { a: MinKey } - max: { a: 10 }' for namespace db.c to shard s1";
const RECEIVING = 'Unable to start new balancer operation because this shard is currently receiving chunk [{ a: 0 }, { a: 5 }) for namespace db.d from s2';

test('an identical donation joins the one in flight and gets its outcome', async () => {
  const registry = new ActiveMigrationsRegistry();
  const first = registry.registerDonateChunk(request);
  const second = registry.registerDonateChunk({ ...request, range: { min: { a: new MinKey() }, max: { a: 10 } } });
  assert.equal(first.mode, 'execute');
  assert.equal(second.mode, 'join');
  if (first.mode !== 'execute' || second.mode !== 'join') return;
  const error = new MongoError(ErrorCodes.OperationFailed, 'Data transfer error');
  first.signalComplete({ ok: false, error });
  assert.deepEqual(await second.completion, { ok: false, error });
  assert.equal(registry.activeDonation(), undefined);
});

test('a different donation is refused with MongoDB\'s message', () => {
  const registry = new ActiveMigrationsRegistry();
  registry.registerDonateChunk(request);
  for (const other of [{ ...request, toShardId: 's2' }, { ...request, range: { min: { a: 0 }, max: { a: 10 } } }, { ...request, waitForDelete: true }, { ...request, nss: 'db.d' }]) {
    assert.throws(() => registry.registerDonateChunk(other), conflict(DONATING));
  }
  assert.throws(() => registry.registerReceiveChunk('db.d', { min: { a: 0 }, max: { a: 5 } }, 's2'), conflict(DONATING));
});

test('a shard receiving a chunk neither donates nor receives another', () => {
  const registry = new ActiveMigrationsRegistry();
  const receive = registry.registerReceiveChunk('db.d', { min: { a: 0 }, max: { a: 5 } }, 's2');
  assert.throws(() => registry.registerDonateChunk(request), conflict(RECEIVING));
  assert.throws(() => registry.registerReceiveChunk('db.d', { min: { a: 0 }, max: { a: 5 } }, 's2'), conflict(RECEIVING));
  receive.release();
  assert.equal(registry.registerDonateChunk(request).mode, 'execute');
});

test('a finished donation frees the shard, and completes only once', () => {
  const registry = new ActiveMigrationsRegistry();
  const first = registry.registerDonateChunk(request);
  assert.ok(first.mode === 'execute');
  first.signalComplete({ ok: true });
  assert.throws(() => first.signalComplete({ ok: true }), (e: unknown) => e instanceof MongoError && e.code === ErrorCodes.InternalError);
  assert.ok(registry.registerReceiveChunk('db.c', request.range, 's1'));
});

test('releasing a receive twice does not free a later one', () => {
  const registry = new ActiveMigrationsRegistry();
  const first = registry.registerReceiveChunk('db.c', request.range, 's0');
  first.release();
  registry.registerReceiveChunk('db.d', { min: { a: 0 }, max: { a: 5 } }, 's2');
  first.release();
  assert.deepEqual(registry.activeReceive()?.nss, 'db.d');
});
