import { isPlainObject, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';

// The fields each command accepts, as MongoDB's IDL parses them (a strict command refuses any
// other with 40415). One table for nodes and routers, checked by both dispatchers, so the two
// cannot drift. A command missing here is not checked: only the commands whose fields were read
// from MongoDB 7.0's IDL files are listed, and none whose IDL is not strict.

// Accepted by every command (src/mongo/idl/generic_argument.idl and generic_args_with_types.idl:
// API version 1, then the unstable ones, which routers and shards send each other).
const GENERIC_ARGUMENTS: ReadonlySet<string> = new Set([
  'apiVersion', 'apiStrict', 'apiDeprecationErrors', '$db', 'maxTimeMS', 'readConcern', 'writeConcern', 'lsid',
  'clientOperationKey', 'txnNumber', 'autocommit', 'startTransaction', 'stmtId', 'comment', '$readPreference', '$clusterTime',
  '$audit', '$client', '$configServerState', 'allowImplicitCollectionCreation', '$oplogQueryData', '$queryOptions', '$replData',
  'databaseVersion', 'shardVersion', 'tracking_info', 'coordinator', 'maxTimeMSOpOnly', '$configTime', '$topologyTime',
  'txnRetryCounter', 'mayBypassWriteBlocking', '$tenant', 'expectPrefix', 'placementConflictTime',
]);

// write_ops.idl's WriteCommandRequestBase, chained into insert, update and delete.
const WRITE_COMMAND_BASE = ['bypassDocumentValidation', 'ordered', 'stmtId', 'stmtIds', 'isTimeseriesNamespace', 'collectionUUID', 'encryptionInformation', 'bypassEmptyTsReplacement'];

// Each command's own fields, by the name MongoDB's parser reports in its errors; the comment names
// the IDL file under src/mongo/db/ they were read from.
const COMMAND_FIELDS: Readonly<Record<string, readonly string[]>> = {
  // query/find_command.idl
  find: [
    'filter', 'projection', 'sort', 'hint', 'collation', 'skip', 'limit', 'batchSize', 'singleBatch', 'allowDiskUse', 'min', 'max',
    'returnKey', 'showRecordId', 'tailable', 'oplogReplay', 'noCursorTimeout', 'awaitData', 'allowPartialResults', 'let', 'term',
    'readOnce', 'allowSpeculativeMajorityRead', '$_requestResumeToken', '$_resumeAfter', '$_startAt', 'runtimeConstants',
    'collectionUUID', 'encryptionInformation', 'mirrored', 'sampleId',
  ],
  // query/getmore_command.idl
  getMore: ['collection', 'batchSize', 'term', 'lastKnownCommittedOpTime'],
  // query/kill_cursors.idl
  killCursors: ['cursors'],
  // pipeline/aggregate_command.idl
  aggregate: [
    'pipeline', 'explain', 'allowDiskUse', 'cursor', 'bypassDocumentValidation', 'collation', 'hint', 'let', 'needsMerge', 'fromMongos',
    '$_requestReshardingResumeToken', 'exchange', 'runtimeConstants', 'isMapReduceCommand', 'collectionUUID', '$_passthroughToShard',
    '$_generateV2ResumeTokens', 'encryptionInformation', '$_externalDataSources', 'sampleId', '$_isClusterQueryWithoutShardKeyCmd',
  ],
  // query/count_command.idl
  count: ['query', 'limit', 'skip', 'hint', 'collation', 'fields', 'encryptionInformation', 'mirrored', 'sampleId'],
  // query/distinct_command.idl; `hint` came with 7.1, and docshard honours it.
  distinct: ['key', 'query', 'collation', 'mirrored', 'sampleId', 'hint'],
  // ops/write_ops.idl
  insert: ['documents', ...WRITE_COMMAND_BASE],
  update: ['updates', 'let', 'runtimeConstants', ...WRITE_COMMAND_BASE],
  delete: ['deletes', 'let', 'runtimeConstants', ...WRITE_COMMAND_BASE],
  findAndModify: [
    'query', 'fields', 'sort', 'batchSize', 'singleBatch', 'hint', 'collation', 'arrayFilters', 'remove', 'update', 'upsert', 'new',
    'bypassDocumentValidation', 'let', 'runtimeConstants', 'encryptionInformation', 'bypassEmptyTsReplacement', 'sampleId',
    '$_originalQuery', '$_originalCollation', '$_allowShardKeyUpdatesWithoutFullShardKeyInQuery',
  ],
  // commands/create.idl
  create: [
    'capped', 'autoIndexId', 'idIndex', 'size', 'max', 'storageEngine', 'validator', 'validationLevel', 'validationAction',
    'indexOptionDefaults', 'viewOn', 'pipeline', 'collation', 'changeStreamPreAndPostImages', 'timeseries', 'clusteredIndex',
    'expireAfterSeconds', 'encryptedFields', 'temp', 'flags',
  ],
  // drop.idl, drop_database.idl
  drop: ['collectionUUID'],
  dropDatabase: [],
  // create_indexes.idl
  createIndexes: ['v', 'indexes', 'ignoreUnknownIndexOptions', 'commitQuorum', 'returnOnStart', 'isTimeseriesNamespace', 'collectionUUID'],
  // drop_indexes.idl
  dropIndexes: ['index', 'isTimeseriesNamespace', 'collectionUUID'],
  // coll_mod.idl
  collMod: [
    'index', 'validator', 'validationLevel', 'validationAction', 'viewOn', 'pipeline', 'recordPreImages', 'changeStreamPreAndPostImages',
    'expireAfterSeconds', 'timeseries', 'isTimeseriesNamespace', 'dryRun', 'collectionUUID', 'cappedSize', 'cappedMax',
  ],
  // list_collections.idl, list_indexes.idl, commands/list_databases.idl
  listCollections: ['cursor', 'filter', 'nameOnly', 'authorizedCollections', 'includePendingDrops'],
  listIndexes: ['cursor', 'includeBuildUUIDs', 'includeIndexBuildInfo', 'isTimeseriesNamespace'],
  listDatabases: ['nameOnly', 'authorizedDatabases', 'filter'],
  // commands/rename_collection.idl
  renameCollection: ['to', 'dropTarget', 'stayTemp', 'collectionUUID'],
  // dbcommands.idl
  dbStats: ['scale', 'freeStorage'],
  // explain.idl (the command it explains is checked as that command)
  explain: ['verbosity'],
  // commands/txn_cmds.idl
  commitTransaction: ['commitTimestamp', 'recoveryToken'],
  abortTransaction: ['recoveryToken'],
  // s/transaction_coordinator_commands: recovery of a decision (participants: [])
  coordinateCommitTransaction: ['participants'],
  // s/request_types/sharded_ddl_commands.idl
  checkMetadataConsistency: ['cursor', 'checkIndexes'],
};

// MongoDB's other names for these commands.
const ALIASES: Readonly<Record<string, string>> = { findandmodify: 'findAndModify', deleteIndexes: 'dropIndexes', dbstats: 'dbStats' };

const BY_NAME = new Map<string, { name: string; fields: ReadonlySet<string> }>();
for (const [name, fields] of Object.entries(COMMAND_FIELDS)) BY_NAME.set(name, { name, fields: new Set(fields) });
for (const [alias, name] of Object.entries(ALIASES)) BY_NAME.set(alias, BY_NAME.get(name)!);

// Refuses a field the command `name` (its first field) does not know, as MongoDB's IDL parser
// does: 40415 "BSON field 'find.bogus' is an unknown field.". The command explain runs is checked
// in turn, as MongoDB parses it with its own command's IDL.
export function checkCommandFields(name: string, cmd: Doc): void {
  const known = BY_NAME.get(name);
  if (known === undefined) return;
  for (const field in cmd) {
    if (field !== name && !known.fields.has(field) && !GENERIC_ARGUMENTS.has(field)) {
      throw new MongoError(40415, `BSON field '${known.name}.${field}' is an unknown field.`);
    }
  }
  if (name === 'explain' && isPlainObject(cmd.explain)) {
    const inner = Object.keys(cmd.explain)[0];
    if (inner !== undefined) checkCommandFields(inner, cmd.explain);
  }
}
