// The fields of each command a client may send, by the name MongoDB's parser reports in its errors.
// Where MongoDB has an IDL for the command, its fields are read from it (7.0; the comment names the
// file under src/mongo/db/ or src/mongo/s/); where MongoDB parses the command by hand, they are
// the fields its parser reads, and those docshard's implementation reads.

// write_ops.idl's WriteCommandRequestBase, chained into insert, update and delete.
const WRITE_COMMAND_BASE = ['bypassDocumentValidation', 'ordered', 'stmtId', 'stmtIds', 'isTimeseriesNamespace', 'collectionUUID', 'encryptionInformation', 'bypassEmptyTsReplacement'];

// auth/user_management_commands.idl
const USER_FIELDS = ['pwd', 'customData', 'roles', 'digestPassword', 'authenticationRestrictions', 'mechanisms'];
const ROLE_FIELDS = ['privileges', 'roles', 'authenticationRestrictions'];

export const CLIENT_COMMAND_FIELDS: Readonly<Record<string, readonly string[]>> = {
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
  // commands/map_reduce.idl
  mapReduce: ['map', 'reduce', 'out', 'query', 'sort', 'collation', 'limit', 'finalize', 'scope', 'verbose', 'bypassDocumentValidation', 'jsMode'],
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
  // explain.idl (the command it explains is checked as that command)
  explain: ['verbosity'],

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
  // Parsed by hand (commands/collection_stats, validate, dbcommands' dataSize).
  collStats: ['scale', 'verbose', 'waitForLock'],
  validate: ['full', 'scandata', 'repair', 'metadata', 'background', 'checkBSONConformance'],
  dataSize: ['keyPattern', 'min', 'max', 'estimate'],

  // commands/txn_cmds.idl
  commitTransaction: ['commitTimestamp', 'recoveryToken'],
  abortTransaction: ['recoveryToken'],
  // commands/sessions_commands.idl, kill_sessions.idl: the command's own value is its argument.
  startSession: [],
  refreshSessions: [],
  endSessions: [],
  killSessions: [],
  killAllSessions: [],
  killAllSessionsByPattern: [],

  // repl/hello.idl, and what drivers add to the handshake since: `loadBalanced` (mongos reads it
  // before the IDL does) and `backpressure` (driver 7's overload retries).
  hello: [
    'forShell', 'hostInfo', 'hangUpOnStepDown', 'internalClient', 'client', 'topologyVersion', 'maxAwaitTimeMS', 'helloOk',
    'compression', 'saslSupportedMechs', 'speculativeAuthenticate', 'loadBalanced', 'backpressure',
  ],
  // auth/sasl_commands.idl
  saslStart: ['mechanism', 'autoAuthorize', 'options', 'payload'],
  saslContinue: ['conversationId', 'payload'],
  // auth/user_management_commands.idl, commands/connection_status.idl
  createUser: USER_FIELDS,
  updateUser: USER_FIELDS,
  dropUser: [],
  grantRolesToUser: ['roles'],
  revokeRolesFromUser: ['roles'],
  usersInfo: ['showCredentials', 'showCustomData', 'showPrivileges', 'showAuthenticationRestrictions', 'filter'],
  createRole: ROLE_FIELDS,
  updateRole: ROLE_FIELDS,
  dropRole: [],
  dropAllRolesFromDatabase: [],
  grantRolesToRole: ['roles'],
  revokeRolesFromRole: ['roles'],
  grantPrivilegesToRole: ['privileges'],
  revokePrivilegesFromRole: ['privileges'],
  rolesInfo: ['showPrivileges', 'showAuthenticationRestrictions', 'showBuiltinRoles'],
  connectionStatus: ['showPrivileges'],
  connPoolStats: [],

  // Diagnostics MongoDB parses by hand and that take nothing but their own value.
  ping: [],
  // Replica set administration (db/repl/repl_set_commands.cpp).
  replSetInitiate: [],
  replSetGetConfig: ['commitmentStatus', 'includeNewlyAdded'],
  replSetGetStatus: ['initialSync'],
  replSetStepDown: ['secondaryCatchUpPeriodSecs', 'force'],
  replSetFreeze: [],
  replSetStepUp: [],
  replSetGetRBID: [],
  replSetReconfig: ['force'],
  replSetSyncFrom: [],
  buildInfo: [],
  hostInfo: [],
  getCmdLineOpts: [],
  whatsmyuri: [],
  listCommands: [],
  isdbgrid: [],
  getLog: [],
  // commands/profile.idl
  profile: ['slowms', 'sampleRate', 'filter'],
  // commands/kill_op: the operation's id.
  killOp: ['op'],
  // commands/fail_point_cmd (test commands)
  configureFailPoint: ['mode', 'data'],
  waitForFailPoint: ['timesEntered'],

  // s/request_types/sharded_ddl_commands.idl and the router's commands (s/commands/*.idl).
  checkMetadataConsistency: ['cursor', 'checkIndexes'],
  configureQueryAnalyzer: ['mode', 'samplesPerSecond'],
  analyzeShardKey: ['key', 'keyCharacteristics', 'readWriteDistribution', 'sampleRate', 'sampleSize'],
  addShard: ['name', 'maxSize'],
  listShards: [],
  enableSharding: ['primaryShard'],
  getShardVersion: ['fullMetadata'],
  shardCollection: [
    'key', 'unique', 'numInitialChunks', 'presplitHashedZones', 'collation', 'timeseries', 'collectionUUID', 'implicitlyCreateIndex',
    'enforceUniquenessCheck',
  ],
  refineCollectionShardKey: ['key', 'enforceUniquenessCheck'],
  reshardCollection: ['key', 'unique', 'numInitialChunks', 'zones', 'forceRedistribution', 'collation'],
  abortReshardCollection: [],
  commitReshardCollection: [],
  moveCollection: ['toShard'],
  unshardCollection: ['toShard'],
  abortMoveCollection: [],
  abortUnshardCollection: [],
  split: ['find', 'middle', 'bounds'],
  mergeChunks: ['bounds'],
  moveChunk: ['find', 'bounds', 'to', 'forceJumbo', 'secondaryThrottle', '_secondaryThrottle', 'waitForDelete', '_waitForDelete'],
  moveRange: ['toShard', 'min', 'max', 'forceJumbo', 'secondaryThrottle', 'waitForDelete', '_waitForDelete'],
  removeShard: [],
  movePrimary: ['to'],
  flushRouterConfig: [],
  balancerStart: [],
  balancerStop: [],
  balancerStatus: [],
  balancerCollectionStatus: [],
  setAllowMigrations: ['allowMigrations'],
  clearJumboFlag: ['find', 'bounds'],
  configureCollectionBalancing: ['chunkSize', 'defragmentCollection', 'enableAutoMerger'],
  addShardToZone: ['zone'],
  removeShardFromZone: ['zone'],
  updateZoneKeyRange: ['min', 'max', 'zone'],
};

// Commands whose fields are names of things rather than options, so that no field is unknown to
// them as such: MongoDB answers a name it does not know its own way, and so does docshard.
export const OPEN_COMMANDS: Readonly<Record<string, string>> = {
  getParameter: 'each field names a parameter; none known: InvalidOptions "no option found to get"',
  setParameter: 'each field names a parameter, refused when unknown as mongod refuses it',
  serverStatus: 'each field names a section to include or leave out; mongod ignores one it does not have',
  currentOp: 'each field that is not one of its options ($all, $ownOps, ...) filters the operations',
};

// MongoDB's other names for these commands, reported under the command's own name.
export const CLIENT_ALIASES: Readonly<Record<string, string>> = {
  findandmodify: 'findAndModify', deleteIndexes: 'dropIndexes', dbstats: 'dbStats', datasize: 'dataSize', isMaster: 'hello', ismaster: 'hello',
  buildinfo: 'buildInfo', addshard: 'addShard', listshards: 'listShards', enablesharding: 'enableSharding', getshardversion: 'getShardVersion',
  shardcollection: 'shardCollection', flushrouterconfig: 'flushRouterConfig', movechunk: 'moveChunk', removeshard: 'removeShard',
  moveprimary: 'movePrimary', mapreduce: 'mapReduce', addshardtozone: 'addShardToZone', removeshardfromzone: 'removeShardFromZone', updatezonekeyrange: 'updateZoneKeyRange',
};
