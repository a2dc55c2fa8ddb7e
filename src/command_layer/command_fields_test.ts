import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import { checkCommandFields } from './command_fields.js';
import { OPEN_COMMANDS } from './client_command_fields.js';
import { configServerCommandSet, shardCommands } from '../mongod_commands/registry.js';
import { routerCommands } from '../router/router_commands.js';
import { routerTestCommands } from '../router/commands/cluster_fail_points.js';

// Every name a node's command table holds, a config server's (as process/node_process.ts builds
// them) included, and a router's (process/router_process.ts), test commands included.
function nodeCommandNames(): string[] {
  return [...shardCommands, ...configServerCommandSet].flatMap((def) => def.names);
}

function routerCommandNames(): string[] {
  return [...routerCommands, ...routerTestCommands].flatMap((def) => def.names);
}

function unknownField(name: string, cmd: Record<string, unknown>): string | undefined {
  try {
    checkCommandFields(name, cmd);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof MongoError);
    assert.equal(err.code, 40415);
    assert.equal(err.codeName, 'Location40415');
    return err.message;
  }
}

describe('checkCommandFields', () => {
  it('refuses a field the command does not know, naming it as MongoDB does', () => {
    assert.equal(unknownField('find', { find: 'c', bogusField: 1, $db: 'test' }), "BSON field 'find.bogusField' is an unknown field.");
    assert.equal(unknownField('insert', { insert: 'c', documents: [], upsert: true }), "BSON field 'insert.upsert' is an unknown field.");
    assert.equal(unknownField('dropDatabase', { dropDatabase: 1, force: true }), "BSON field 'dropDatabase.force' is an unknown field.");
  });

  it('reports an alias under the command name MongoDB parses it by', () => {
    assert.equal(unknownField('findandmodify', { findandmodify: 'c', query: {}, remove: true, returnNew: true }), "BSON field 'findAndModify.returnNew' is an unknown field.");
  });

  it('accepts what drivers and mongosh send, generic arguments included', () => {
    const generic = { $db: 'test', lsid: {}, txnNumber: 1, $clusterTime: {}, $readPreference: { mode: 'primaryPreferred' }, readConcern: {}, writeConcern: { w: 1 }, maxTimeMS: 5, comment: 'c', apiVersion: '1', apiStrict: false, apiDeprecationErrors: false };
    const commands: Record<string, unknown>[] = [
      { find: 'c', filter: {}, sort: {}, projection: {}, hint: {}, skip: 1, limit: 1, batchSize: 2, singleBatch: true, let: {}, collation: {}, allowDiskUse: true, allowPartialResults: true, noCursorTimeout: true, returnKey: true, showRecordId: true, tailable: true, awaitData: true, min: {}, max: {} },
      { getMore: 1, collection: 'c', batchSize: 1 },
      { killCursors: 'c', cursors: [] },
      { aggregate: 'c', pipeline: [], cursor: {}, allowDiskUse: true, hint: 'x', let: {}, bypassDocumentValidation: true, collation: {}, explain: true },
      { count: 'c', query: {}, limit: 1, skip: 1, hint: {}, collation: {} },
      { distinct: 'c', key: 'a', query: {}, collation: {}, hint: {} },
      { insert: 'c', documents: [], ordered: false, bypassDocumentValidation: true },
      { update: 'c', updates: [], ordered: true, let: {}, bypassDocumentValidation: true },
      { delete: 'c', deletes: [], ordered: true, let: {} },
      { findAndModify: 'c', query: {}, sort: {}, remove: false, update: {}, new: true, fields: {}, upsert: true, arrayFilters: [], hint: {}, let: {}, collation: {}, bypassDocumentValidation: true },
      { create: 'c', capped: true, size: 1, max: 1, validator: {}, validationLevel: 'strict', validationAction: 'error', viewOn: 'v', pipeline: [], collation: {}, timeseries: {}, expireAfterSeconds: 1, clusteredIndex: {} },
      { createIndexes: 'c', indexes: [], commitQuorum: 'majority' },
      { dropIndexes: 'c', index: '*' },
      { listCollections: 1, filter: {}, nameOnly: true, authorizedCollections: true, cursor: {} },
      { listIndexes: 'c', cursor: {} },
      { listDatabases: 1, nameOnly: false, filter: {}, authorizedDatabases: true },
      { renameCollection: 'd.a', to: 'd.b', dropTarget: true },
      { collMod: 'c', validator: {}, index: {}, expireAfterSeconds: 1 },
      { dbStats: 1, scale: 1024 },
      { explain: { find: 'c', filter: {} }, verbosity: 'queryPlanner' },
      { abortTransaction: 1, recoveryToken: {} },
    ];
    for (const cmd of commands) assert.equal(unknownField(Object.keys(cmd)[0]!, { ...cmd, ...generic }), undefined, JSON.stringify(cmd));
  });

  it('accepts what routers and shards send each other', () => {
    assert.equal(unknownField('find', { find: 'c', filter: {}, shardVersion: {}, databaseVersion: {}, $configTime: 1, $topologyTime: 1 }), undefined);
  });

  it('checks the command explain runs as that command', () => {
    assert.equal(unknownField('explain', { explain: { find: 'c', bogus: 1 }, verbosity: 'queryPlanner' }), "BSON field 'find.bogus' is an unknown field.");
    assert.equal(unknownField('explain', { explain: { find: 'c' }, bogus: 1 }), "BSON field 'explain.bogus' is an unknown field.");
  });

  it('checks the commands MongoDB parses by hand and docshard\'s internal ones too', () => {
    assert.equal(unknownField('ping', { ping: 1, anything: 1 }), "BSON field 'ping.anything' is an unknown field.");
    assert.equal(unknownField('listIndexes', { listIndexes: 'c', cursor: {}, nameOnly: true }), "BSON field 'listIndexes.nameOnly' is an unknown field.");
    assert.equal(unknownField('isMaster', { isMaster: 1, helloOK: true }), "BSON field 'hello.helloOK' is an unknown field.");
    assert.equal(unknownField('_recvChunkStart', { _recvChunkStart: 'd.c', whatever: 1 }), "BSON field '_recvChunkStart.whatever' is an unknown field.");
    assert.equal(unknownField('_configsvrCommitChunkMigration', { _configsvrCommitChunkMigration: 'd.c', fromShard: 's', toShardName: 't' }), "BSON field '_configsvrCommitChunkMigration.toShardName' is an unknown field.");
  });

  it('accepts what the driver\'s and mongosh\'s handshake, authentication and session commands send', () => {
    const commands: Record<string, unknown>[] = [
      { ismaster: 1, backpressure: '2', helloOk: true, client: {}, compression: ['none'], saslSupportedMechs: 'admin.u', speculativeAuthenticate: {} },
      { hello: 1, loadBalanced: true, apiVersion: '1', $db: 'admin' },
      { hello: 1, maxAwaitTimeMS: 10_000, topologyVersion: {}, $db: 'admin' },
      { saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: {}, autoAuthorize: 1, options: { skipEmptyExchange: true }, $db: 'admin' },
      { saslContinue: 1, conversationId: 1, payload: {}, $db: 'admin' },
      { endSessions: [], writeConcern: { w: 0 }, $readPreference: { mode: 'primaryPreferred' }, $db: 'admin' },
      { buildInfo: 1, lsid: {}, $db: 'admin' },
      { ping: 1, $db: 'admin' },
      { getLog: 'startupWarnings', $db: 'admin' },
      { getParameter: 1, featureCompatibilityVersion: 1, $db: 'admin' },
      { getParameter: 'foo', $db: 'admin' },
      { serverStatus: 1, repl: 0, metrics: 0, locks: 0, $db: 'admin' },
      { currentOp: 1, $all: true, active: true, 'command.find': 'c', $db: 'admin' },
      { listDatabases: 1, nameOnly: false, $readPreference: { mode: 'primaryPreferred' }, $db: 'admin' },
      { connectionStatus: 1, showPrivileges: true, $db: 'admin' },
      { balancerStart: 1, maxTimeMS: 60_000, $db: 'admin' },
      { moveChunk: 'd.c', find: {}, to: 's', _waitForDelete: true, $db: 'admin' },
    ];
    for (const cmd of commands) assert.equal(unknownField(Object.keys(cmd)[0]!, cmd), undefined, JSON.stringify(cmd));
  });

  it('has the fields of every command a shard, a config server and a router answer', () => {
    const names = [...new Set([...nodeCommandNames(), ...routerCommandNames()])].filter((name) => !Object.hasOwn(OPEN_COMMANDS, name));
    const unchecked = names.filter((name) => unknownField(name, { [name]: 1, notAFieldOfAnyCommand: 1 }) === undefined);
    assert.deepEqual(unchecked, []);
  });
});
