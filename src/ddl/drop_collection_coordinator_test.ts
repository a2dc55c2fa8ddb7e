import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { dropCollectionStep } from './drop_collection_coordinator.js';
import type { DDLPhaseEffect } from './ddl_phase_effects.js';
import { assertResumesFromEachPhase, commandsOf, coordinatorDoc, describeEffect, runPhase, runPhases, type Answer } from './ddl_phase_test_util.js';

const PHASES = ['kFreezeCollection', 'kEnterCriticalSection', 'kDropCollection', 'kReleaseCriticalSection'];
const UUID_A = new UUID();
const SHARDS = [{ _id: 'shard0', host: 'h0:1' }, { _id: 'shard1', host: 'h1:1' }];
const doc = coordinatorDoc('dropCollection', 'test.c', { _shardsvrDropCollection: 'c' });

function cluster(sharded: boolean): Answer {
  return (e: DDLPhaseEffect) => {
    if (e.type !== 'read') return [];
    if (e.cmd.find === 'shards') return SHARDS;
    return sharded ? [{ _id: 'test.c', uuid: UUID_A, key: { x: 1 } }] : [];
  };
}

test('a sharded collection: its UUID and every shard noted, migrations stopped, every shard blocked, the commit on the config server before the shards drop, every shard unblocked', () => {
  const runs = runPhases(dropCollectionStep, PHASES, doc, cluster(true));
  const freeze = runs.get('kFreezeCollection')!;
  assert.deepEqual(freeze.saves, [{ shards: SHARDS, collectionUUID: UUID_A }]);
  assert.deepEqual(freeze.trace, ['read config find collections', 'read config find shards', 'save shards,collectionUUID', 'send config _configsvrSetAllowMigrations']);
  assert.deepEqual(freeze.effects[2], {
    type: 'send', requests: [{ to: 'config', db: 'admin', cmd: { _configsvrSetAllowMigrations: 'test.c', allowMigrations: false } }], accept: [ErrorCodes.NamespaceNotSharded],
  });
  const block = runs.get('kEnterCriticalSection')!.effects;
  assert.deepEqual(block.map(describeEffect), ['send h0:1,h1:1 _shardsvrParticipantBlock']);
  assert.deepEqual(commandsOf(block[0])[0], {
    _shardsvrParticipantBlock: 'c', blockType: 'ReadsAndWrites', reason: { command: 'dropCollection', ns: 'test.c' },
  });
  const drop = runs.get('kDropCollection')!.effects;
  assert.deepEqual(drop.map(describeEffect), ['send config _configsvrCommitDropCollection', 'send h0:1,h1:1 _shardsvrDropCollectionParticipant']);
  assert.deepEqual(commandsOf(drop[0])[0], { _configsvrCommitDropCollection: 'test.c', collectionUUID: UUID_A });
  const release = runs.get('kReleaseCriticalSection')!.effects;
  assert.deepEqual(commandsOf(release[0])[1]?.blockType, 'Unblock');
});

test('an unsharded collection: no migrations to stop, and the commit names no UUID', () => {
  const runs = runPhases(dropCollectionStep, PHASES, doc, cluster(false));
  assert.deepEqual(runs.get('kFreezeCollection')!.saves, [{ shards: SHARDS, collectionUUID: null }]);
  assert.deepEqual(runs.get('kFreezeCollection')!.effects.map(describeEffect), ['read config find collections', 'read config find shards']);
  assert.deepEqual(commandsOf(runs.get('kDropCollection')!.effects[0])[0], { _configsvrCommitDropCollection: 'test.c' });
});

test('after a crash in any phase the step, given the persisted document, decides the same effects again', () => {
  assertResumesFromEachPhase(dropCollectionStep, PHASES, doc, cluster(true));
  // Run again after the config server forgot the collection, the freeze notes it unsharded and the
  // later phases act on what the first run persisted.
  const persisted = runPhase(dropCollectionStep, 'kFreezeCollection', doc, cluster(true)).doc;
  const again = runPhase(dropCollectionStep, 'kDropCollection', { ...persisted, phase: 'kDropCollection' }, cluster(false));
  assert.deepEqual(commandsOf(again.effects[0])[0], { _configsvrCommitDropCollection: 'test.c', collectionUUID: UUID_A });
});
