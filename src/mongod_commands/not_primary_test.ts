import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { systemClock } from '../base/clock.js';
import type { Network } from '../wire/network.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { ReplicationCoordinator } from '../replication/replication_coordinator.js';
import type { ReplStore } from '../replication/repl_store.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { MongodServices } from './command.js';
import { refuseUnlessPrimary } from './not_primary.js';

// A member that has no config yet: not a writable primary, nothing readable.
function uninitializedMember(): MongodServices {
  const store: ReplStore = { readConfig: () => undefined, writeConfig: () => undefined, readLastVote: () => null, writeLastVote: () => undefined, rollbackId: () => 1 };
  const unreachable = (): Promise<never> => Promise.reject(new Error('no network in this test'));
  const network: Network = { command: unreachable, commandRaw: unreachable, forwardMessage: unreachable, close: () => Promise.resolve() };
  const replication = new ReplicationCoordinator({
    setName: 'rs0', store, network, clock: systemClock, clusterTime: { now: () => new Timestamp({ t: 1, i: 0 }), advance: () => undefined }, isSelf: () => false, logger: pino({ level: 'silent' }),
    // Never started: its oplog is never enabled, so no storage is touched.
    storage: {} as StorageEngine,
    dbpath: '',
    local: {} as LocalCollections,
  });
  return { replication } as unknown as MongodServices;
}

function refusal(node: MongodServices, name: string, db: string, cmd: Record<string, unknown>): number | undefined {
  try {
    refuseUnlessPrimary(node, name, db, cmd);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof MongoError);
    assert.ok(err.extra.topologyVersion !== undefined, 'the reply carries the topologyVersion');
    return err.code;
  }
}

describe('the not-primary refusals', () => {
  it('refuses writes with NotWritablePrimary and reads with NotPrimaryNoSecondaryOk or NotPrimaryOrSecondary', () => {
    const node = uninitializedMember();
    assert.equal(refusal(node, 'insert', 'app', { insert: 'c' }), 10107);
    assert.equal(refusal(node, 'createIndexes', 'app', { createIndexes: 'c' }), 10107);
    assert.equal(refusal(node, '_configsvrAddShard', 'admin', { _configsvrAddShard: 'rs0/h:1' }), 10107, 'a config server\'s catalog commands');
    for (const name of ['commitTransaction', 'abortTransaction', 'prepareTransaction', 'coordinateCommitTransaction', '_recvChunkStart', '_migrateClone', '_shardsvrCreateCollection']) {
      assert.equal(refusal(node, name, 'admin', { [name]: 1 }), 10107, `${name}: a secondary would answer from what it holds in memory`);
    }
    assert.equal(refusal(node, 'find', 'app', { find: 'c', autocommit: false, $readPreference: { mode: 'secondary' } }), 10107, 'a transaction\'s statement');
    assert.equal(refusal(node, '_shardsvrGetStatsForBalancing', 'admin', { _shardsvrGetStatsForBalancing: 1 }), undefined, 'it only reads');
    assert.equal(refusal(node, 'find', 'app', { find: 'c' }), 13435);
    assert.equal(refusal(node, 'find', 'app', { find: 'c', $readPreference: { mode: 'primary' } }), 13435);
    assert.equal(refusal(node, 'find', 'app', { find: 'c', $readPreference: { mode: 'secondaryPreferred' } }), 13436, 'nothing readable yet');
    assert.equal(refusal(node, 'insert', 'local', { insert: 'c' }), undefined, 'the local database is the member\'s own');
    assert.equal(refusal(node, 'hello', 'admin', { hello: 1 }), undefined);
    assert.equal(refusal(node, 'replSetGetStatus', 'admin', { replSetGetStatus: 1 }), undefined);
  });

  it('refuses nothing on a node without --replSet', () => {
    assert.equal(refusal({} as MongodServices, 'insert', 'app', { insert: 'c' }), undefined);
  });
});
