import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { createCollectionStep } from './create_collection_coordinator.js';
import { CLEANUP_ON_ABORT, type DDLPhaseEffect } from './ddl_phase_effects.js';
import { assertResumesFromEachPhase, commandsOf, coordinatorDoc, describeEffect, runPhase, runPhases, type Answer } from './ddl_phase_test_util.js';

const PHASES = [
  'kCheckPreconditions', 'kEnterWriteCriticalSectionOnCoordinator', 'kCreateCollectionOnCoordinator', 'kEnterCriticalSectionOnDataShards',
  'kCreateCollectionOnParticipants', 'kCommitOnShardingCatalog', 'kExitCriticalSection',
];
const UUID_A = new UUID();
const SHARDS = [{ _id: 'shard0', host: 'h0:1' }, { _id: 'shard1', host: 'h1:1' }];
const hashed = coordinatorDoc('createCollection', 'test.c', { shardKey: { x: 'hashed' }, unique: false, presplitHashedZones: false });

interface World {
  sharded?: Doc;
  chunks?: Doc[];
  local?: Doc | 'view';
  indexes?: Doc[];
}

// A cluster whose primary (shard0) creates the collection when asked, and lists it from then on.
function cluster(world: World = {}): Answer {
  let local = world.local;
  return (e: DDLPhaseEffect) => {
    const [cmd] = commandsOf(e);
    if (e.type === 'command') {
      if (cmd?.create !== undefined) local = { name: 'c', type: 'collection', options: {}, info: { uuid: UUID_A } };
      return [{ ok: 1, n: 0 }];
    }
    if (e.type === 'send') return e.requests.map(() => ({ ok: 1, collectionUUID: UUID_A }));
    if (e.type !== 'read') return [];
    const filter = cmd?.filter as Doc | undefined;
    if (cmd?.find === 'shards') return filter === undefined ? SHARDS : SHARDS.filter((s) => s._id === filter._id);
    if (cmd?.find === 'collections') return world.sharded === undefined ? [] : [world.sharded];
    if (cmd?.find === 'tags') return [];
    if (cmd?.find === 'chunks') return world.chunks ?? [];
    if (cmd?.listIndexes !== undefined) return world.indexes ?? [{ v: 2, key: { _id: 1 }, name: '_id_' }, { v: 2, key: { x: 'hashed' }, name: 'x_hashed' }];
    if (local === 'view') return [{ name: 'c', type: 'view' }];
    return local === undefined ? [] : [local];
  };
}

test('a new collection: created on the primary under its critical section, translated, its data shards blocked and given copies, committed, every critical section released', () => {
  const runs = runPhases(createCollectionStep, PHASES, hashed, cluster(), 'shard0');
  assert.deepEqual(runs.get('kCheckPreconditions')!.effects.map(describeEffect), ['read config find collections']);
  assert.deepEqual(runs.get('kEnterWriteCriticalSectionOnCoordinator')!.effects.map(describeEffect), ['read config find shards', 'send h0:1 _shardsvrParticipantBlock']);
  const create = runs.get('kCreateCollectionOnCoordinator')!;
  assert.deepEqual(create.effects.map(describeEffect), [
    'read config find shards', 'read h0:1 listCollections 1', 'command h0:1 create', 'read h0:1 listCollections 1',
    'read h0:1 listIndexes c', 'command h0:1 count', 'read config find shards', 'read config find tags',
  ]);
  assert.equal(create.saves.length, 1);
  assert.deepEqual(create.saves[0]!.dataShards, [{ _id: 'shard1', host: 'h1:1' }]);
  assert.deepEqual(create.saves[0]!.collectionUUID, UUID_A);
  assert.deepEqual(runs.get('kEnterCriticalSectionOnDataShards')!.effects.flatMap(commandsOf), [
    { _shardsvrParticipantBlock: 'c', blockType: 'Writes', reason: { command: 'createCollection', ns: 'test.c' } },
  ]);
  const participants = runs.get('kCreateCollectionOnParticipants')!.effects;
  assert.deepEqual(participants.map(describeEffect), ['read config find shards', 'read h0:1 listCollections 1', 'read h0:1 listIndexes c', 'send h1:1 _shardsvrCreateCollectionParticipant']);
  assert.deepEqual(commandsOf(participants[3]), [{
    _shardsvrCreateCollectionParticipant: 'c', indexes: [{ v: 2, key: { x: 'hashed' }, name: 'x_hashed' }], options: {}, collectionUUID: UUID_A,
  }]);
  const commit = runs.get('kCommitOnShardingCatalog')!;
  assert.deepEqual(commit.effects.map(describeEffect), ['send config _configsvrShardCollection']);
  assert.deepEqual(commit.saves, [{ result: { collectionsharded: 'test.c', collectionUUID: UUID_A } }]);
  assert.deepEqual(runs.get('kExitCriticalSection')!.effects.map(describeEffect), ['read config find shards', 'send h1:1,h0:1 _shardsvrParticipantBlock']);
});

test('a collection without its shard key index gets it built before the translation is persisted', () => {
  const create = runPhase(createCollectionStep, 'kCreateCollectionOnCoordinator', hashed, cluster({ indexes: [{ v: 2, key: { _id: 1 }, name: '_id_' }] }), 'shard0');
  assert.deepEqual(create.trace.slice(-2), ['command h0:1 createIndexes', 'save collectionUUID,layout,dataShards']);
  assert.deepEqual(commandsOf(create.effects.at(-1)), [{ createIndexes: 'c', indexes: [{ key: { x: 'hashed' }, name: 'x_hashed' }] }]);
  assert.equal(create.saves.length, 1);
});

test('a collection sharded already with the same key answers its result and changes nothing; with another key AlreadyInitialized; a view or bad arguments refuse', () => {
  const runs = runPhases(createCollectionStep, PHASES, hashed, cluster({ sharded: { _id: 'test.c', key: { x: 'hashed' }, uuid: UUID_A } }), 'shard0');
  assert.deepEqual(runs.get('kCheckPreconditions')!.saves, [{ result: { collectionsharded: 'test.c', collectionUUID: UUID_A } }]);
  for (const phase of PHASES.slice(1, -1)) assert.deepEqual(runs.get(phase)!.effects, [], phase);
  assert.deepEqual(runs.get('kExitCriticalSection')!.effects.map(describeEffect), ['read config find shards', 'send h0:1 _shardsvrParticipantBlock']);
  const refuses = (phase: string, doc: typeof hashed, world: World, code: number, self = 'shard0'): void => {
    assert.throws(() => runPhase(createCollectionStep, phase, doc, cluster(world), self), (e: unknown) => e instanceof MongoError && e.code === code, `code ${code}`);
  };
  refuses('kCheckPreconditions', hashed, { sharded: { _id: 'test.c', key: { y: 1 }, uuid: UUID_A } }, ErrorCodes.AlreadyInitialized);
  refuses('kCheckPreconditions', coordinatorDoc('createCollection', 'test.c', { shardKey: { x: 'hashed' }, unique: true, presplitHashedZones: false }), {}, ErrorCodes.InvalidOptions);
  refuses('kCreateCollectionOnCoordinator', hashed, { local: 'view' }, ErrorCodes.CommandNotSupportedOnView);
  refuses('kEnterWriteCriticalSectionOnCoordinator', hashed, {}, ErrorCodes.ShardNotFound, 'shard9');
});

test('MongoDB 8.0\'s registration tracks an existing collection as unsplittable on the primary; shardCollection of an unsplittable one only where it lies on the primary', () => {
  const register = coordinatorDoc('createCollection', 'test.c', {
    shardKey: { _id: 1 }, unique: false, presplitHashedZones: false, unsplittable: true, registerExistingCollectionInGlobalCatalog: true,
  });
  const local = { name: 'c', type: 'collection', options: {}, info: { uuid: UUID_A } };
  const idIndex = [{ v: 2, key: { _id: 1 }, name: '_id_' }];
  const runs = runPhases(createCollectionStep, PHASES, register, cluster({ local, indexes: idIndex }), 'shard0');
  const create = runs.get('kCreateCollectionOnCoordinator')!;
  assert.ok(!create.trace.some((t) => t.includes('create')), 'nothing created');
  assert.deepEqual(create.saves[0]!.dataShards, []);
  assert.deepEqual(commandsOf(runs.get('kCommitOnShardingCatalog')!.effects[0]).map((c) => [c.key, c.unsplittable]), [[{ _id: 1 }, true]]);
  assert.throws(() => runPhase(createCollectionStep, 'kCreateCollectionOnCoordinator', register, cluster({ indexes: idIndex }), 'shard0'),
    (e: unknown) => e instanceof MongoError && e.code === ErrorCodes.NamespaceNotFound);
  const tracked = { _id: 'test.c', key: { x: 1 }, uuid: UUID_A };
  assert.deepEqual(runPhase(createCollectionStep, 'kCheckPreconditions', register, cluster({ sharded: tracked }), 'shard0').saves, [{ result: { collectionsharded: 'test.c', collectionUUID: UUID_A } }]);
  const unsplittable = { _id: 'test.c', key: { _id: 1 }, uuid: UUID_A, unsplittable: true };
  const onPrimary = runPhase(createCollectionStep, 'kCheckPreconditions', hashed, cluster({ sharded: unsplittable, chunks: [{ shard: 'shard0' }] }), 'shard0');
  assert.deepEqual(onPrimary.saves, []);
  assert.throws(() => runPhase(createCollectionStep, 'kCheckPreconditions', hashed, cluster({ sharded: unsplittable, chunks: [{ shard: 'shard1' }] }), 'shard0'),
    (e: unknown) => e instanceof MongoError && e.code === ErrorCodes.IllegalOperation);
});

test('a refusal up to the commit drops the data shards\' copies if made, by UUID and only if empty, then releases every critical section', () => {
  const persisted = runPhases(createCollectionStep, PHASES.slice(0, 3), hashed, cluster(), 'shard0').get('kCreateCollectionOnCoordinator')!.doc;
  const cleanup = (phase: string) => runPhase(createCollectionStep, CLEANUP_ON_ABORT, { ...persisted, phase }, cluster(), 'shard0');
  assert.deepEqual(cleanup('kCheckPreconditions').effects, []);
  assert.deepEqual(cleanup('kEnterCriticalSectionOnDataShards').effects.map(describeEffect), ['read config find shards', 'send h1:1,h0:1 _shardsvrParticipantBlock']);
  for (const phase of ['kCreateCollectionOnParticipants', 'kCommitOnShardingCatalog']) {
    const effects = cleanup(phase).effects;
    assert.deepEqual(effects.map(describeEffect), ['send h1:1 _shardsvrDropCollectionParticipant', 'read config find shards', 'send h1:1,h0:1 _shardsvrParticipantBlock']);
    assert.deepEqual(commandsOf(effects[0]), [{ _shardsvrDropCollectionParticipant: 'c', collectionUUID: UUID_A, requireCollectionEmpty: true }]);
    assert.deepEqual(commandsOf(effects[2]).map((c) => c.blockType), ['Unblock', 'Unblock']);
  }
  // Before the translation was noted, only the primary's critical section is released.
  assert.deepEqual(runPhase(createCollectionStep, CLEANUP_ON_ABORT, { ...hashed, phase: 'kCreateCollectionOnCoordinator' }, cluster(), 'shard0').effects.map(describeEffect), [
    'read config find shards', 'send h0:1 _shardsvrParticipantBlock',
  ]);
});

test('after a crash in any phase the step, given the persisted document, decides the same effects again', () => {
  // The collection the first run created is there when the phase runs again.
  const created = { name: 'c', type: 'collection', options: {}, info: { uuid: UUID_A } };
  assertResumesFromEachPhase(createCollectionStep, PHASES, hashed, cluster({ local: created }), 'shard0', ['kCommitOnShardingCatalog']);
  // Once the commit noted its result, the phases run again change nothing but release the critical sections.
  const committed = runPhases(createCollectionStep, PHASES.slice(0, 6), hashed, cluster(), 'shard0').get('kCommitOnShardingCatalog')!.doc;
  assert.deepEqual(runPhase(createCollectionStep, 'kCommitOnShardingCatalog', committed, cluster(), 'shard0').effects, []);
  assert.deepEqual(runPhase(createCollectionStep, 'kExitCriticalSection', committed, cluster(), 'shard0').effects.map(describeEffect), [
    'read config find shards', 'send h1:1,h0:1 _shardsvrParticipantBlock',
  ]);
});
