import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import { dropDatabaseStep } from './drop_database_coordinator.js';
import type { DDLPhaseEffect } from './ddl_phase_effects.js';
import { commandsOf, coordinatorDoc, describeEffect, runPhase, type Answer } from './ddl_phase_test_util.js';

const DB_UUID = new UUID();
const SHARDS = [{ _id: 'shard0', host: 'h0:1' }, { _id: 'shard1', host: 'h1:1' }];
const A = { _id: 'app.a', uuid: new UUID() };
const B = { _id: 'app.b', uuid: new UUID() };
const doc = (fields: Doc = {}) => ({ ...coordinatorDoc('dropDatabase', 'app', { dropDatabase: 1 }, fields), phase: 'kDrop' });

function cluster(databaseUUID: UUID | undefined, sharded: Doc[]): Answer {
  return (e: DDLPhaseEffect) => {
    if (e.type !== 'read') return [];
    if (e.cmd.find === 'shards') return SHARDS;
    if (e.cmd.find === 'databases') return databaseUUID === undefined ? [] : [{ _id: 'app', primary: 'shard0', version: { uuid: databaseUUID } }];
    return sharded;
  };
}

const dropOf = (ns: string): string[] => [
  'send config _configsvrSetAllowMigrations', 'send h0:1,h1:1 _shardsvrParticipantBlock', 'send config _configsvrCommitDropCollection',
  `send h0:1,h1:1 _shardsvrDropCollectionParticipant`, `send h0:1,h1:1 _shardsvrParticipantBlock ${ns}`,
];

function described(effects: DDLPhaseEffect[]): string[] {
  // The unblock of a collection's critical section, told from its block by the namespace it names.
  return effects.map((e) => {
    const [cmd] = commandsOf(e);
    return cmd?.blockType === 'Unblock' ? `${describeEffect(e)} ${String((cmd.reason as Doc).ns)}` : describeEffect(e);
  });
}

test('the primary blocks the database, notes its UUID, drops each sharded collection as the drop coordinator does (each noted before its drop), then the database everywhere, and unblocks once the shards were told to forget it', () => {
  const run = runPhase(dropDatabaseStep, 'kDrop', doc(), cluster(DB_UUID, [A, B]));
  assert.deepEqual(described(run.effects), [
    'blockDatabase app', 'read config find shards', 'read config find databases', 'read config find collections',
    ...dropOf('app.a'), ...dropOf('app.b'),
    'send h0:1,h1:1 _shardsvrDropDatabaseParticipant', 'send config _configsvrCommitDropDatabase', 'hint h0:1,h1:1 _flushDatabaseCacheUpdates', 'unblockDatabase app',
  ]);
  assert.deepEqual(run.saves, [{ databaseUUID: DB_UUID }, { dropping: A }, { dropping: B }, { dropping: null }]);
  // Each collection is noted before its first command goes.
  assert.deepEqual(run.trace.filter((t) => t.startsWith('save') || t.includes('AllowMigrations') || t.includes('DropDatabase')), [
    'save databaseUUID', 'save dropping', 'send config _configsvrSetAllowMigrations', 'save dropping', 'send config _configsvrSetAllowMigrations',
    'save dropping', 'send h0:1,h1:1 _shardsvrDropDatabaseParticipant', 'send config _configsvrCommitDropDatabase',
  ]);
  assert.deepEqual(commandsOf(run.effects[6]), [{ _configsvrCommitDropCollection: 'app.a', collectionUUID: A.uuid }]);
  assert.deepEqual(run.effects.at(-1), { type: 'unblockDatabase', db: 'app', reason: 'dropDatabase' });
});

test('run again after a crash in the middle of a collection\'s drop, it finishes the collection noted before listing what is left', () => {
  const run = runPhase(dropDatabaseStep, 'kDrop', doc({ databaseUUID: DB_UUID, dropping: A }), cluster(DB_UUID, [B]));
  assert.deepEqual(described(run.effects).slice(0, 9), [
    'blockDatabase app', 'read config find shards', 'read config find databases', ...dropOf('app.a'), 'read config find collections',
  ]);
  assert.deepEqual(run.saves, [{ dropping: B }, { dropping: null }]);
});

test('run again after its commit, it drops nothing of a database created anew since, or gone, and only unblocks', () => {
  for (const now of [new UUID(), undefined]) {
    const run = runPhase(dropDatabaseStep, 'kDrop', doc({ databaseUUID: DB_UUID, dropping: null }), cluster(now, [A]));
    assert.deepEqual(described(run.effects), ['blockDatabase app', 'read config find shards', 'read config find databases', 'hint h0:1,h1:1 _flushDatabaseCacheUpdates', 'unblockDatabase app']);
    assert.deepEqual(run.saves, []);
  }
});

test('a database without an entry when the drop started still has what the shards hold of it dropped, again on every run', () => {
  for (const fields of [{}, { databaseUUID: null }]) {
    const run = runPhase(dropDatabaseStep, 'kDrop', doc(fields), cluster(undefined, []));
    assert.deepEqual(described(run.effects).slice(3, 6), ['read config find collections', 'send h0:1,h1:1 _shardsvrDropDatabaseParticipant', 'send config _configsvrCommitDropDatabase']);
  }
  // The same document, before and after the crash, decides the same effects.
  const first = runPhase(dropDatabaseStep, 'kDrop', doc(), cluster(DB_UUID, [A, B]));
  const again = runPhase(dropDatabaseStep, 'kDrop', { ...first.doc, dropping: null, databaseUUID: DB_UUID }, cluster(DB_UUID, [A, B]));
  assert.deepEqual(again.effects, first.effects);
});
