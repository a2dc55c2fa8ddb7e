import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { collModStep } from './coll_mod_coordinator.js';
import type { DDLPhaseEffect } from './ddl_phase_effects.js';
import { assertResumesFromEachPhase, commandsOf, coordinatorDoc, describeEffect, runPhase, runPhases, type Answer } from './ddl_phase_test_util.js';

const PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kUpdateShards'];
const UUID_A = new UUID();
const SHARDS = [{ _id: 'shard0', host: 'h0:1' }, { _id: 'shard1', host: 'h1:1' }, { _id: 'shard2', host: 'h2:1' }];
const collModRequest = { collMod: 'c', validator: { x: { $gt: 0 } } };
const doc = coordinatorDoc('collMod', 'test.c', { collModRequest });

function cluster(entry: Doc | undefined): Answer {
  return (e: DDLPhaseEffect) => {
    if (e.type === 'send') return e.requests.map(() => ({ ok: 1 }));
    if (e.type !== 'read') return [];
    if (e.cmd.find === 'shards') return SHARDS;
    if (e.cmd.find === 'collections') return entry === undefined ? [] : [entry];
    return [{ shard: 'shard0' }, { shard: 'shard2' }];
  };
}

test('a sharded collection: the primary applies it first, migrations stop, the other owners of chunks apply it and migrations resume', () => {
  const runs = runPhases(collModStep, PHASES, doc, cluster({ _id: 'test.c', uuid: UUID_A }), 'shard0');
  const check = runs.get('kCheckPreconditions')!;
  assert.deepEqual(check.effects.map(describeEffect), ['read config find shards', 'read config find collections', 'send h0:1 _shardsvrCollModParticipant']);
  assert.deepEqual(commandsOf(check.effects[2]), [{ _shardsvrCollModParticipant: 'c', collModRequest }]);
  assert.deepEqual(check.saves, [{ facts: { sharded: true, migrationsStopped: false, collectionUUID: UUID_A, result: {} } }]);
  assert.deepEqual(runs.get('kFreezeMigrations')!.effects.map(describeEffect), ['send config _configsvrSetAllowMigrations']);
  const update = runs.get('kUpdateShards')!.effects;
  assert.deepEqual(update.map(describeEffect), ['read config find chunks', 'read config find shards', 'send h2:1 _shardsvrCollModParticipant', 'send config _configsvrSetAllowMigrations']);
  assert.deepEqual(commandsOf(update[3]), [{ _configsvrSetAllowMigrations: 'test.c', allowMigrations: true }]);
});

test('migrations stopped before stay stopped; an unsharded collection is the primary\'s alone', () => {
  const stopped = runPhases(collModStep, PHASES, doc, cluster({ _id: 'test.c', uuid: UUID_A, permitMigrations: false }), 'shard0');
  assert.deepEqual(stopped.get('kUpdateShards')!.effects.map(describeEffect).slice(2), ['send h2:1 _shardsvrCollModParticipant']);
  const unsharded = runPhases(collModStep, PHASES, doc, cluster(undefined), 'shard1');
  assert.deepEqual(unsharded.get('kCheckPreconditions')!.effects.map(describeEffect)[2], 'send h1:1 _shardsvrCollModParticipant');
  assert.deepEqual(unsharded.get('kFreezeMigrations')!.effects, []);
  assert.deepEqual(unsharded.get('kUpdateShards')!.effects, []);
});

test('the primary\'s reply, but for ok, is what the request answers; a shard missing from config.shards refuses', () => {
  const answer: Answer = (e) => (e.type === 'send' ? [{ ok: 1, expireAfterSeconds_old: 5, expireAfterSeconds_new: 10 }] : cluster(undefined)(e));
  assert.deepEqual(runPhase(collModStep, 'kCheckPreconditions', doc, answer, 'shard0').saves[0], {
    facts: { sharded: false, migrationsStopped: false, collectionUUID: null, result: { expireAfterSeconds_old: 5, expireAfterSeconds_new: 10 } },
  });
  assert.throws(() => runPhase(collModStep, 'kCheckPreconditions', doc, cluster(undefined), 'shard9'), (e: unknown) => e instanceof MongoError && e.code === ErrorCodes.ShardNotFound);
});

test('after a crash in any phase the step, given the persisted document, decides the same effects again', () => {
  assertResumesFromEachPhase(collModStep, PHASES, doc, cluster({ _id: 'test.c', uuid: UUID_A }), 'shard0');
});
