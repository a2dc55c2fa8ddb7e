import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { refineCollectionShardKeyStep } from './refine_collection_shard_key_coordinator.js';
import type { DDLPhaseEffect } from './ddl_phase_effects.js';
import { assertResumesFromEachPhase, commandsOf, coordinatorDoc, describeEffect, runPhase, runPhases, type Answer } from './ddl_phase_test_util.js';

const PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kCommit'];
const UUID_A = new UUID();
const SHARDS = [{ _id: 'shard0', host: 'h0:1' }, { _id: 'shard1', host: 'h1:1' }, { _id: 'shard2', host: 'h2:1' }];
const doc = coordinatorDoc('refineCollectionShardKey', 'test.c', { newShardKey: { x: 1, y: 1 } });

function cluster(options: { key?: Doc; sharded?: boolean; indexesOn?: Record<string, Doc[]> } = {}): Answer {
  const good = [{ v: 2, key: { _id: 1 }, name: '_id_' }, { v: 2, key: { x: 1, y: 1 }, name: 'x_1_y_1' }];
  return (e: DDLPhaseEffect) => {
    if (e.type !== 'read') return [];
    if (e.cmd.find === 'shards') return SHARDS;
    if (e.cmd.find === 'collections') return options.sharded === false ? [] : [{ _id: 'test.c', uuid: UUID_A, key: options.key ?? { x: 1 } }];
    if (e.cmd.find === 'chunks') return [{ shard: 'shard0' }, { shard: 'shard2' }, { shard: 'shard0' }];
    const shard = e.to === 'config' ? '' : e.to.host;
    return options.indexesOn?.[shard] ?? good;
  };
}

test('the precondition reads the indexes of the shards owning chunks only, then the migrations stop and the config server commits, the shards told to refresh', () => {
  const runs = runPhases(refineCollectionShardKeyStep, PHASES, doc, cluster());
  const check = runs.get('kCheckPreconditions')!;
  assert.deepEqual(check.effects.map(describeEffect), [
    'read config find collections', 'read config find chunks', 'read config find shards', 'read h0:1 listIndexes c', 'read h2:1 listIndexes c',
  ]);
  assert.deepEqual(check.saves, [{ facts: { alreadyRefined: false, collectionUUID: UUID_A } }]);
  assert.deepEqual(runs.get('kFreezeMigrations')!.effects.map(describeEffect), ['send config _configsvrSetAllowMigrations']);
  const commit = runs.get('kCommit')!.effects;
  assert.deepEqual(commit.map(describeEffect), ['send config _configsvrCommitRefineCollectionShardKey', 'read config find shards', 'hint h0:1,h1:1,h2:1 _flushRoutingTableCacheUpdates']);
  assert.deepEqual(commandsOf(commit[0]), [{ _configsvrCommitRefineCollectionShardKey: 'test.c', key: { x: 1, y: 1 }, collectionUUID: UUID_A }]);
});

test('a key already refined answers ok with nothing frozen or committed', () => {
  const runs = runPhases(refineCollectionShardKeyStep, PHASES, doc, cluster({ key: { x: 1, y: 1 } }));
  assert.deepEqual(runs.get('kCheckPreconditions')!.effects.map(describeEffect), ['read config find collections']);
  assert.deepEqual(runs.get('kFreezeMigrations')!.effects, []);
  assert.deepEqual(runs.get('kCommit')!.effects, []);
});

test('the precondition refuses an unsharded collection, a key that does not extend the current one, and a shard owning chunks without a usable index', () => {
  const refusal = (answer: Answer, code: number): void => {
    assert.throws(() => runPhase(refineCollectionShardKeyStep, 'kCheckPreconditions', doc, answer), (e: unknown) => e instanceof MongoError && e.code === code);
  };
  refusal(cluster({ sharded: false }), ErrorCodes.NamespaceNotSharded);
  refusal(cluster({ key: { z: 1 } }), ErrorCodes.InvalidOptions);
  refusal(cluster({ indexesOn: { 'h2:1': [{ v: 2, key: { _id: 1 }, name: '_id_' }] } }), ErrorCodes.InvalidOptions);
  // A shard that owns no chunk is not asked.
  assert.doesNotThrow(() => runPhase(refineCollectionShardKeyStep, 'kCheckPreconditions', doc, cluster({ indexesOn: { 'h1:1': [] } })));
});

test('after a crash in any phase the step, given the persisted document, decides the same effects again', () => {
  assertResumesFromEachPhase(refineCollectionShardKeyStep, PHASES, doc, cluster());
});
