import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { movePrimaryStep } from './move_primary_coordinator.js';
import { CLEANUP_ON_ABORT, type DDLPhaseEffect } from './ddl_phase_effects.js';
import { assertResumesFromEachPhase, commandsOf, coordinatorDoc, describeEffect, runPhase, runPhases, type Answer } from './ddl_phase_test_util.js';

const PHASES = ['kClone', 'kEnterCriticalSection', 'kCommit', 'kClean', 'kExitCriticalSection'];
const SHARDS = [{ _id: 'shard0', host: 'h0:1' }, { _id: 'shard1', host: 'h1:1' }];
const VERSION = { uuid: new UUID(), lastMod: 1 };
const doc = coordinatorDoc('movePrimary', 'app', { to: 'shard1' });

interface World {
  primary?: string;
  onRecipient?: string[];
  cloned?: string[];
}

function cluster(world: World = {}): Answer {
  return (e: DDLPhaseEffect) => {
    const [cmd] = commandsOf(e);
    if (e.type === 'send') return e.requests.map((r) => (r.cmd._shardsvrCloneCatalogData === undefined ? { ok: 1 } : { ok: 1, clonedColls: world.cloned ?? ['app.u1', 'app.u2'] }));
    if (e.type === 'command') return [{ ok: 1 }];
    if (e.type !== 'read') return [];
    const filter = cmd?.filter as Doc | undefined;
    if (cmd?.find === 'shards') return filter === undefined ? SHARDS : SHARDS.filter((s) => s._id === filter._id);
    if (cmd?.find === 'databases') return [{ _id: 'app', primary: world.primary ?? 'shard0', version: VERSION }];
    if (cmd?.find === 'collections') return [{ _id: 'app.s', uuid: new UUID() }];
    if (e.to !== 'config' && e.to.host === 'h1:1') return (world.onRecipient ?? []).map((name) => ({ name }));
    return [{ name: 'u1', type: 'collection' }, { name: 's', type: 'collection' }, { name: 'v', type: 'view' }, { name: 'u2', type: 'collection' }];
  };
}

const FACTS = { from: 'shard0', expectedDatabaseVersion: VERSION, collections: ['u1', 'u2'], shardedCollections: ['s'] };

test('the donor blocks writes, notes what to move, and the recipient copies it; then both block, the config server commits, the donor drops its copies, and both unblock', () => {
  const runs = runPhases(movePrimaryStep, PHASES, doc, cluster(), 'shard0');
  const clone = runs.get('kClone')!;
  assert.deepEqual(clone.effects.map(describeEffect), [
    'read config find shards', 'read config find shards', 'blockDatabaseWrites app', 'read config find databases',
    'read h0:1 listCollections 1', 'read config find collections', 'read h1:1 listCollections 1', 'logChange movePrimary.start', 'send h1:1 _shardsvrCloneCatalogData',
  ]);
  assert.deepEqual(clone.saves, [{ facts: FACTS }]);
  assert.deepEqual(clone.trace.slice(-3), ['save facts', 'logChange movePrimary.start', 'send h1:1 _shardsvrCloneCatalogData']);
  assert.deepEqual(clone.effects[7], { type: 'logChange', server: 'h0:1', what: 'movePrimary.start', ns: 'app', details: { from: 'shard0', to: 'shard1' } });
  assert.deepEqual(commandsOf(clone.effects.at(-1)), [{ _shardsvrCloneCatalogData: 'app', from: 'h0:1', collections: ['u1', 'u2'], shardedCollections: ['s'] }]);
  assert.deepEqual(runs.get('kEnterCriticalSection')!.effects.map(describeEffect), ['blockDatabase app', 'read config find shards', 'send h1:1 _shardsvrMovePrimaryEnterCriticalSection']);
  assert.deepEqual(runs.get('kCommit')!.effects.flatMap(commandsOf), [{ _configsvrCommitMovePrimary: 'app', from: 'shard0', to: 'shard1', expectedDatabaseVersion: VERSION }]);
  assert.deepEqual(runs.get('kClean')!.effects.map(describeEffect), ['read config find shards', 'command h0:1 drop', 'command h0:1 drop']);
  assert.deepEqual(runs.get('kClean')!.effects[1], { type: 'command', request: { to: { host: 'h0:1' }, db: 'app', cmd: { drop: 'u1' } }, accept: [ErrorCodes.NamespaceNotFound] });
  assert.deepEqual(runs.get('kExitCriticalSection')!.effects.map(describeEffect), [
    'read config find shards', 'read config find shards', 'unblockDatabase app', 'send h1:1 _shardsvrMovePrimaryExitCriticalSection', 'logChange movePrimary.end',
  ]);
});

test('kClone refuses a database moved meanwhile, a recipient holding one of the collections, and a copy that missed one', () => {
  const refuses = (world: World, code: number): void => {
    assert.throws(() => runPhase(movePrimaryStep, 'kClone', doc, cluster(world), 'shard0'), (e: unknown) => e instanceof MongoError && e.code === code, `code ${code}`);
  };
  refuses({ primary: 'shard1' }, ErrorCodes.ConflictingOperationInProgress);
  refuses({ onRecipient: ['u2'] }, ErrorCodes.NamespaceExists);
  refuses({ cloned: ['app.u1'] }, ErrorCodes.OperationFailed);
});

test('kClone run again drops the recipient\'s partial copies and copies afresh what was noted, without reading the catalog again', () => {
  const again = runPhase(movePrimaryStep, 'kClone', { ...doc, facts: FACTS }, cluster({ onRecipient: ['u1'] }), 'shard0');
  assert.deepEqual(again.effects.map(describeEffect), [
    'read config find shards', 'read config find shards', 'blockDatabaseWrites app', 'read config find shards', 'command h1:1 drop', 'command h1:1 drop', 'send h1:1 _shardsvrCloneCatalogData',
  ]);
  assert.deepEqual(again.saves, []);
});

test('an abort drops the recipient\'s copies, releases its critical section if it took one, unblocks the donor and logs the error', () => {
  const cleanup = (phase: string, fields: Doc) => runPhase(movePrimaryStep, CLEANUP_ON_ABORT, { ...doc, ...fields, phase }, cluster(), 'shard0').effects.map(describeEffect);
  assert.deepEqual(cleanup('kClone', {}), ['unblockDatabase app']);
  assert.deepEqual(cleanup('kClone', { facts: FACTS }), [
    'read config find shards', 'command h1:1 drop', 'command h1:1 drop', 'unblockDatabase app', 'read config find shards', 'logChange movePrimary.error',
  ]);
  for (const phase of ['kEnterCriticalSection', 'kCommit']) {
    assert.deepEqual(cleanup(phase, { facts: FACTS }), [
      'read config find shards', 'command h1:1 drop', 'command h1:1 drop', 'send h1:1 _shardsvrMovePrimaryExitCriticalSection', 'unblockDatabase app',
      'read config find shards', 'logChange movePrimary.error',
    ], phase);
  }
  // A recipient removed since has nothing left to clean.
  const gone: Answer = (e) => (e.type === 'read' && commandsOf(e)[0]?.filter === undefined ? [SHARDS[0]!] : cluster()(e));
  assert.deepEqual(runPhase(movePrimaryStep, CLEANUP_ON_ABORT, { ...doc, facts: FACTS, phase: 'kCommit' }, gone, 'shard0').effects.map(describeEffect), [
    'read config find shards', 'unblockDatabase app', 'read config find shards', 'logChange movePrimary.error',
  ]);
});

test('after a crash in any phase the step, given the persisted document, decides the same effects again', () => {
  // kClone run again after it noted what to move copies afresh instead (the test above).
  assertResumesFromEachPhase(movePrimaryStep, PHASES, doc, cluster(), 'shard0', ['kClone']);
});
