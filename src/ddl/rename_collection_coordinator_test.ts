import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { renameCollectionStep } from './rename_collection_coordinator.js';
import type { DDLPhaseEffect } from './ddl_phase_effects.js';
import { assertResumesFromEachPhase, commandsOf, coordinatorDoc, describeEffect, runPhase, runPhases, type Answer } from './ddl_phase_test_util.js';

const PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kBlockCrudAndRename', 'kRenameMetadata', 'kUnblockCrud'];
const SOURCE = new UUID();
const TARGET = new UUID();
const SHARDS = [{ _id: 'shard0', host: 'h0:1' }, { _id: 'shard1', host: 'h1:1' }];

interface World {
  sharded?: Record<string, UUID>;
  local?: Record<string, Doc>;
  databases?: Record<string, string>;
}

function cluster(world: World): Answer {
  return (e: DDLPhaseEffect) => {
    if (e.type !== 'read') return [];
    const filter = e.cmd.filter as Doc | undefined;
    if (e.cmd.find === 'shards') return SHARDS;
    if (e.cmd.find === 'collections') {
      const uuid = world.sharded?.[String(filter?._id)];
      return uuid === undefined ? [] : [{ _id: filter?._id, uuid }];
    }
    if (e.cmd.find === 'databases') {
      const primary = world.databases?.[String(filter?._id)];
      return primary === undefined ? [] : [{ _id: filter?._id, primary }];
    }
    const info = world.local?.[`${e.db}.${String(filter?.name)}`];
    return info === undefined ? [] : [info];
  };
}

const rename = (to: string, dropTarget = false) => coordinatorDoc('renameCollection', 'test.a', { to, dropTarget });
const local = (uuid: UUID): Doc => ({ name: 'x', type: 'collection', info: { uuid } });

test('a sharded source: noted with the shards, its migrations stopped, every shard blocks both names and renames its copy, the config server re-keys, every shard unblocks', () => {
  const runs = runPhases(renameCollectionStep, PHASES, rename('test.b'), cluster({ sharded: { 'test.a': SOURCE } }), 'shard0');
  const check = runs.get('kCheckPreconditions')!;
  assert.deepEqual(check.effects.map(describeEffect), [
    'read config find shards', 'read config find collections', 'read config find collections', 'read h0:1 listCollections 1', 'read h0:1 listCollections 1',
  ]);
  assert.deepEqual(check.saves, [{ facts: { shards: SHARDS, primary: 'shard0', sourceUUID: SOURCE, sourceSharded: true, targetUUID: null, targetSharded: false } }]);
  assert.deepEqual(runs.get('kFreezeMigrations')!.effects.flatMap(commandsOf), [{ _configsvrSetAllowMigrations: 'test.a', allowMigrations: false }]);
  const block = runs.get('kBlockCrudAndRename')!.effects;
  assert.deepEqual(block.map(describeEffect), [
    'send h0:1,h1:1 _shardsvrParticipantBlock', 'send h0:1,h1:1 _shardsvrParticipantBlock', 'send h0:1,h1:1 _shardsvrRenameCollectionParticipant',
  ]);
  assert.deepEqual(commandsOf(block[1]).map((c) => c._shardsvrParticipantBlock), ['b', 'b']);
  assert.deepEqual(commandsOf(block[2]).map((c) => c.renameSource), [true, true]);
  assert.deepEqual(commandsOf(runs.get('kRenameMetadata')!.effects[0]), [{ _configsvrRenameCollectionMetadata: 'test.a', to: 'test.b', sourceUUID: SOURCE }]);
  assert.deepEqual(runs.get('kUnblockCrud')!.effects.flatMap(commandsOf).map((c) => [c._shardsvrParticipantBlock, c.blockType]), [
    ['a', 'Unblock'], ['a', 'Unblock'], ['b', 'Unblock'], ['b', 'Unblock'],
  ]);
});

test('an unsharded source is renamed by the primary alone, and over a sharded target with dropTarget both stop migrating and the target\'s UUID goes to the config server', () => {
  const world = { sharded: { 'test.b': TARGET }, local: { 'test.a': local(SOURCE) } };
  const runs = runPhases(renameCollectionStep, PHASES, rename('test.b', true), cluster(world), 'shard1');
  assert.deepEqual(runs.get('kCheckPreconditions')!.saves[0], {
    facts: { shards: SHARDS, primary: 'shard1', sourceUUID: SOURCE, sourceSharded: false, targetUUID: TARGET, targetSharded: true },
  });
  assert.deepEqual(runs.get('kFreezeMigrations')!.effects.flatMap(commandsOf).map((c) => c._configsvrSetAllowMigrations), ['test.b']);
  assert.deepEqual(commandsOf(runs.get('kBlockCrudAndRename')!.effects[2]).map((c) => c.renameSource), [false, true]);
  assert.deepEqual(commandsOf(runs.get('kRenameMetadata')!.effects[0]), [{ _configsvrRenameCollectionMetadata: 'test.a', to: 'test.b', targetUUID: TARGET }]);
});

test('the precondition refuses, in MongoDB\'s order, a rename to itself, a missing source, a view, an existing target without dropTarget, and across databases a sharded source or target, a missing database or one of another primary', () => {
  const refuses = (doc: ReturnType<typeof rename>, world: World, code: number, self = 'shard0'): void => {
    assert.throws(() => runPhase(renameCollectionStep, 'kCheckPreconditions', doc, cluster(world), self), (e: unknown) => e instanceof MongoError && e.code === code, `code ${code}`);
  };
  assert.throws(() => renameCollectionStep({ phase: 'kCheckPreconditions', doc: coordinatorDoc('renameCollection', 'test.a', { to: 'test.a' }), stage: 'start', memo: {}, self: 'shard0' }, []),
    (e: unknown) => e instanceof MongoError && e.code === ErrorCodes.IllegalOperation);
  refuses(rename('test.b'), { local: { 'test.a': local(SOURCE) } }, ErrorCodes.ShardNotFound, 'shard9');
  refuses(rename('test.b'), {}, ErrorCodes.NamespaceNotFound);
  refuses(rename('test.b'), { local: { 'test.a': { name: 'a', type: 'view' } } }, ErrorCodes.CommandNotSupportedOnView);
  refuses(rename('test.b'), { local: { 'test.a': local(SOURCE), 'test.b': local(TARGET) } }, ErrorCodes.NamespaceExists);
  refuses(rename('other.b'), { sharded: { 'test.a': SOURCE }, databases: { other: 'shard0' } }, ErrorCodes.CommandFailed);
  refuses(rename('other.b'), { sharded: { 'other.b': TARGET }, local: { 'test.a': local(SOURCE) }, databases: { other: 'shard0' } }, ErrorCodes.CommandFailed);
  refuses(rename('other.b'), { local: { 'test.a': local(SOURCE) } }, ErrorCodes.NamespaceNotFound);
  refuses(rename('other.b'), { local: { 'test.a': local(SOURCE) }, databases: { other: 'shard1' } }, 13137);
  const across = runPhase(renameCollectionStep, 'kCheckPreconditions', rename('other.b'), cluster({ local: { 'test.a': local(SOURCE) }, databases: { other: 'shard0' } }), 'shard0');
  assert.deepEqual(across.effects.map(describeEffect).slice(3), ['read config find databases', 'read h0:1 listCollections 1', 'read h0:1 listCollections 1']);
});

test('after a crash in any phase the step, given the persisted document, decides the same effects again', () => {
  assertResumesFromEachPhase(renameCollectionStep, PHASES, rename('test.b'), cluster({ sharded: { 'test.a': SOURCE } }), 'shard0');
  // Run again after the rename reached the shards, the later phases act on the UUIDs noted before it.
  const persisted = runPhase(renameCollectionStep, 'kCheckPreconditions', rename('test.b'), cluster({ sharded: { 'test.a': SOURCE } }), 'shard0').doc;
  const again = runPhase(renameCollectionStep, 'kRenameMetadata', persisted, cluster({ sharded: { 'test.b': SOURCE } }), 'shard0');
  assert.deepEqual(commandsOf(again.effects[0]), [{ _configsvrRenameCollectionMetadata: 'test.a', to: 'test.b', sourceUUID: SOURCE }]);
});
