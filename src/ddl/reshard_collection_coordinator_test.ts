import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reshardCollectionStep } from './reshard_collection_coordinator.js';
import { assertResumesFromEachPhase, commandsOf, coordinatorDoc, describeEffect, runPhases } from './ddl_phase_test_util.js';

const doc = coordinatorDoc('reshardCollection', 'test.c', { _shardsvrReshardCollection: 'c', key: { k: 'hashed' }, numInitialChunks: 4 });

test('kReshard sends the request to the config server as _configsvrReshardCollection of the namespace, and nothing else', () => {
  const runs = runPhases(reshardCollectionStep, ['kReshard'], doc, () => [{ ok: 1 }]);
  const effects = runs.get('kReshard')!.effects;
  assert.deepEqual(effects.map(describeEffect), ['send config _configsvrReshardCollection']);
  assert.deepEqual(commandsOf(effects[0]), [{ _configsvrReshardCollection: 'test.c', key: { k: 'hashed' }, numInitialChunks: 4 }]);
  assert.deepEqual(runs.get('kReshard')!.saves, []);
});

test('resumed after a crash, kReshard sends the same request again (joining the resharding of that key)', () => {
  assertResumesFromEachPhase(reshardCollectionStep, ['kReshard'], doc, () => [{ ok: 1 }]);
});
