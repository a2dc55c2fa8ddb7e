// The fields of the commands docshard's processes send each other (a router to a shard or the
// config server, a shard to a shard or the config server, the config server to a shard): exactly
// what their senders send and their handlers read, beside the generic arguments (the DDL
// coordinator's session, the router's shard and database versions). The comment names the sender.
export const INTERNAL_COMMAND_FIELDS: Readonly<Record<string, readonly string[]>> = {
  // Replica set members to each other (src/replication/member_messages.ts; MongoDB's
  // repl_set_heartbeat_args_v1, repl_set_request_votes_args, update_position_args).
  replSetHeartbeat: ['configVersion', 'configTerm', 'hbv', 'from', 'fromId', 'term', 'checkEmpty', 'heartbeatVersion', 'primaryId'],
  replSetRequestVotes: ['setName', 'dryRun', 'term', 'candidateIndex', 'configVersion', 'configTerm', 'lastAppliedOpTime', 'lastCommittedOp'],
  replSetUpdatePosition: ['optimes'],
  // Config server to a shard: the shard's identity (ShardingCatalogManager.addShard).
  _addShard: ['shardIdentity'],
  // Config server, migration source and DDL coordinators to every shard.
  _flushRoutingTableCacheUpdates: ['syncFromConfig'],
  _flushRoutingTableCacheUpdatesWithWriteConcern: ['syncFromConfig'],
  _flushDatabaseCacheUpdates: ['syncFromConfig'],
  _flushDatabaseCacheUpdatesWithWriteConcern: ['syncFromConfig'],
  // Balancer and router split: sizes and split points of a chunk on its shard.
  splitVector: ['keyPattern', 'min', 'max', 'force', 'maxSplitPoints', 'maxChunkObjects', 'maxChunkSize', 'maxChunkSizeBytes'],
  autoSplitVector: ['keyPattern', 'min', 'max', 'maxChunkSizeBytes', 'limit'],
  _shardsvrGetStatsForBalancing: ['collections', 'scaleFactor'],
  // Router, to learn whether a retried statement ran on a shard.
  _shardsvrRetryableStatementExecuted: ['txnNum'],
  // Router, to reduce again and finalize a mapReduce's results from several shards (ours).
  _shardsvrMapReduceFinish: ['map', 'reduce', 'out', 'finalize', 'scope', 'results'],
  // cleanupOrphaned (s/commands/cleanup_orphaned_cmd: the range to start from, deprecated since 4.4).
  cleanupOrphaned: ['startingFromKey'],

  // Migration: the config server to the donor, the donor to the recipient and back.
  _shardsvrMoveRange: ['toShard', 'min', 'max', 'waitForDelete'],
  _recvChunkStart: ['sessionId', 'from', 'fromShardName', 'toShardName', 'min', 'max', 'shardKeyPattern', 'uuid'],
  _recvChunkStatus: ['sessionId'],
  _recvChunkCommit: ['sessionId'],
  _recvChunkAbort: ['sessionId'],
  _migrateClone: ['sessionId', 'applyMillis'],
  _transferMods: ['sessionId'],
  _getNextSessionMods: ['sessionId', 'after'],

  // Resharding (src/resharding): the router to the primary shard, its ReshardCollectionCoordinator
  // (src/ddl) to the config server, the ReshardingCoordinator there to the shards.
  _shardsvrReshardCollection: ['key', 'unique', 'numInitialChunks', 'zones', 'forceRedistribution', 'collation', 'provenance', 'shardDistribution'],
  _configsvrReshardCollection: ['key', 'unique', 'numInitialChunks', 'zones', 'forceRedistribution', 'collation', 'provenance', 'shardDistribution'],
  _configsvrAbortReshardCollection: ['provenance'],
  _configsvrCommitReshardCollection: [],
  _shardsvrReshardingRecipientStart: [
    'reshardingUUID', 'sourceUUID', 'tempNs', 'sourceKey', 'reshardingKey', 'cloneTimestamp', 'donors', 'sourceChunks', 'recipientChunks',
  ],
  _shardsvrReshardingRecipientStatus: ['reshardingUUID'],
  _shardsvrReshardingDonorSessionHistory: ['after'],
  _shardsvrReshardingRecipientFinish: ['reshardingUUID'],
  _shardsvrReshardingRecipientCommit: ['reshardingUUID', 'tempNs'],
  _shardsvrReshardingRecipientAbort: ['reshardingUUID', 'tempNs'],

  // Two-phase commit: the router to the coordinator, the coordinator to the participants.
  coordinateCommitTransaction: ['participants'],
  prepareTransaction: [],

  // The router to a database's primary shard, which coordinates the DDL (src/ddl).
  _shardsvrDropCollection: [],
  _shardsvrDropDatabase: [],
  _shardsvrCreateCollection: ['shardKey', 'unique', 'numInitialChunks', 'presplitHashedZones', 'unsplittable', 'registerExistingCollectionInGlobalCatalog'],
  _shardsvrRenameCollection: ['to', 'dropTarget'],
  _shardsvrRefineCollectionShardKey: ['newShardKey'],
  _shardsvrCollMod: ['collModRequest'],
  _shardsvrMovePrimary: ['to'],
  _shardsvrCheckMetadataConsistency: ['cursor', 'checkIndexes'],
  // The coordinator to the participant shards.
  _shardsvrParticipantBlock: ['blockType', 'reason'],
  _shardsvrCreateCollectionParticipant: ['indexes', 'options', 'collectionUUID'],
  _shardsvrDropCollectionParticipant: ['collectionUUID', 'requireCollectionEmpty'],
  _shardsvrDropDatabaseParticipant: [],
  _shardsvrRenameCollectionParticipant: ['to', 'sourceUUID', 'renameSource'],
  _shardsvrCollModParticipant: ['collModRequest'],
  _shardsvrCloneCatalogData: ['from', 'collections', 'shardedCollections'],
  _shardsvrMovePrimaryEnterCriticalSection: ['reason'],
  _shardsvrMovePrimaryExitCriticalSection: ['reason'],
  _shardsvrCheckMetadataConsistencyParticipant: ['cursor', 'primaryShardId'],

  // To the config server, from the router (its admin commands), the shards' coordinators and the
  // migration source.
  _configsvrAddShard: ['name', 'maxSize'],
  _configsvrCreateDatabase: ['primaryShard'],
  // `ns` too: the coordinator sends the request it translated whole.
  _configsvrShardCollection: ['ns', 'key', 'unique', 'numInitialChunks', 'presplitHashedZones', 'collectionUUID', 'layout', 'unsplittable'],
  _configsvrCommitChunkSplit: ['chunkRange', 'splitPoints'],
  _configsvrCommitChunksMerge: ['chunkRange'],
  _configsvrCommitDropCollection: ['collectionUUID'],
  _configsvrCommitDropDatabase: [],
  _configsvrRenameCollectionMetadata: ['to', 'sourceUUID', 'targetUUID'],
  _configsvrCommitRefineCollectionShardKey: ['key', 'collectionUUID'],
  _configsvrMoveRange: ['toShard', 'min', 'max', 'find', 'bounds', 'waitForDelete'],
  _configsvrCommitChunkMigration: ['fromShard', 'toShard', 'migratedChunk', 'fromShardCollectionVersion', 'validAfter', 'counts'],
  _configsvrEnsureChunkVersionIsGreaterThan: ['nss', 'minKey', 'maxKey', 'version'],
  _configsvrConfigureCollectionBalancing: ['chunkSize', 'defragmentCollection', 'enableAutoMerger'],
  _configsvrBalancerStart: [],
  _configsvrBalancerStop: [],
  _configsvrBalancerStatus: [],
  _configsvrBalancerCollectionStatus: [],
  _configsvrSetAllowMigrations: ['allowMigrations'],
  _configsvrClearJumboFlag: ['minKey', 'maxKey'],
  _configsvrAddShardToZone: ['zone'],
  _configsvrRemoveShardFromZone: ['zone'],
  _configsvrUpdateZoneKeyRange: ['min', 'max', 'zone'],
  _configsvrRemoveShard: [],
  _configsvrCommitMovePrimary: ['from', 'to', 'expectedDatabaseVersion'],
  _configsvrCheckMetadataConsistency: ['cursor'],
  // A router asks the config server whether users or roles changed.
  _getUserCacheGeneration: [],
};
