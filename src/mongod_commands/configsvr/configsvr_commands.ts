import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import type { InitialChunksLayout } from '../../catalog_decisions/shard_collection.js';
import type { CommandDefinition, ConfigServerServices } from '../command.js';
import { optionalBool, optionalDoc, optionalNumber, optionalString, optionalStringArray, requireBool, requireDoc, requireDocArray, requireString } from '../../command_layer/args.js';
import { Binary, type Timestamp } from 'bson';
import { shardVersionFromBSON } from '../../catalog/chunk_version.js';
import { hangIfFailPointEnabled } from '../../base/fail_points.js';
import { checkDDLCoordinatorSession } from '../sharding/ddl_participant_session.js';

// Registered only in a config server's table (src/process/config_server_process.ts).
type ConfigCommand = CommandDefinition<ConfigServerServices>;
// What the migration's commit and fence read of the config server, all that the simulator gives them.
type CatalogNode = Pick<ConfigServerServices, 'catalogManager' | 'failPoints' | 'wallClock'>;

export const configsvrAddShardCommand: ConfigCommand = {
  names: ['_configsvrAddShard'],
  adminOnly: true,
  async run(ctx, cmd) {
    const host = requireString(cmd, '_configsvrAddShard');
    const shardAdded = await ctx.node.catalogManager.addShard(host, optionalString(cmd, 'name'), optionalNumber(cmd, 'maxSize'));
    return { shardAdded, ok: 1 };
  },
};

export const configsvrCreateDatabaseCommand: ConfigCommand = {
  names: ['_configsvrCreateDatabase'],
  adminOnly: true,
  async run(ctx, cmd) {
    const name = requireString(cmd, '_configsvrCreateDatabase');
    const database = await ctx.node.catalogManager.createDatabase(name, optionalString(cmd, 'primaryShard'));
    return { databaseVersion: database.version, primary: database.primary, ok: 1 };
  },
};

// {_configsvrShardCollection: ns, key, unique, numInitialChunks, presplitHashedZones, collectionUUID,
// layout, unsplittable?}: the commit of the primary shard's CreateCollectionCoordinator (src/ddl), with the initial
// chunks' layout it translated the request with.
export const configsvrShardCollectionCommand: ConfigCommand = {
  names: ['_configsvrShardCollection'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrShardCollection');
    const ns = requireString(cmd, '_configsvrShardCollection');
    if (!(cmd.collectionUUID instanceof Binary)) throw new MongoError(ErrorCodes.BadValue, 'collectionUUID must be a UUID');
    const collection = await ctx.node.catalogManager.commitShardCollection({
      ns, key: requireDoc(cmd, 'key'), unique: optionalBool(cmd, 'unique') ?? false, numInitialChunks: optionalNumber(cmd, 'numInitialChunks'),
      presplitHashedZones: optionalBool(cmd, 'presplitHashedZones') ?? false, uuid: cmd.collectionUUID, layout: initialChunksLayout(requireDoc(cmd, 'layout')),
      unsplittable: optionalBool(cmd, 'unsplittable') ?? false,
    });
    return { collectionsharded: ns, collectionUUID: collection.uuid, ok: 1 };
  },
};

function initialChunksLayout(doc: Doc): InitialChunksLayout {
  const shardZones = requireDoc(doc, 'shardZones');
  return {
    primaryShard: requireString(doc, 'primaryShard'),
    shards: optionalStringArray(doc, 'shards') ?? [],
    zones: requireDocArray(doc, 'zones').map((z) => ({ tag: requireString(z, 'tag'), min: requireDoc(z, 'min'), max: requireDoc(z, 'max') })),
    shardZones: Object.fromEntries(Object.keys(shardZones).map((id) => [id, optionalStringArray(shardZones, id) ?? []])),
    collectionIsEmpty: requireBool(doc, 'collectionIsEmpty'),
  };
}

function range(cmd: Doc, field: string): { min: Doc; max: Doc } {
  const r = requireDoc(cmd, field);
  if (!isPlainObject(r.min) || !isPlainObject(r.max)) throw new MongoError(ErrorCodes.BadValue, `${field} must be {min, max}`);
  return { min: r.min, max: r.max };
}

export const configsvrCommitChunkSplitCommand: ConfigCommand = {
  names: ['_configsvrCommitChunkSplit'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, '_configsvrCommitChunkSplit');
    const points = cmd.splitPoints;
    if (!Array.isArray(points) || !points.every(isPlainObject)) throw new MongoError(ErrorCodes.BadValue, 'splitPoints must be an array of shard keys');
    await ctx.node.catalogManager.splitChunk(ns, range(cmd, 'chunkRange'), points as Doc[]);
    return { ok: 1 };
  },
};

export const configsvrCommitChunksMergeCommand: ConfigCommand = {
  names: ['_configsvrCommitChunksMerge'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, '_configsvrCommitChunksMerge');
    await ctx.node.catalogManager.mergeChunks(ns, range(cmd, 'chunkRange'));
    return { ok: 1 };
  },
};

export const configsvrCommitDropCollectionCommand: ConfigCommand = {
  names: ['_configsvrCommitDropCollection'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrCommitDropCollection');
    await ctx.node.catalogManager.commitDropCollection(requireString(cmd, '_configsvrCommitDropCollection'), cmd.collectionUUID);
    return { ok: 1 };
  },
};

export const configsvrRenameCollectionMetadataCommand: ConfigCommand = {
  names: ['_configsvrRenameCollectionMetadata'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrRenameCollectionMetadata');
    await ctx.node.catalogManager.renameCollectionMetadata(requireString(cmd, '_configsvrRenameCollectionMetadata'), requireString(cmd, 'to'), cmd.sourceUUID, cmd.targetUUID);
    return { ok: 1 };
  },
};

export const configsvrCommitRefineCollectionShardKeyCommand: ConfigCommand = {
  names: ['_configsvrCommitRefineCollectionShardKey'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrCommitRefineCollectionShardKey');
    await ctx.node.catalogManager.commitRefineCollectionShardKey(requireString(cmd, '_configsvrCommitRefineCollectionShardKey'), requireDoc(cmd, 'key'), cmd.collectionUUID);
    return { ok: 1 };
  },
};

export const configsvrCommitDropDatabaseCommand: ConfigCommand = {
  names: ['_configsvrCommitDropDatabase'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrCommitDropDatabase');
    await ctx.node.catalogManager.commitDropDatabase(requireString(cmd, '_configsvrCommitDropDatabase'));
    return { ok: 1 };
  },
};

export const configsvrMoveRangeCommand: ConfigCommand = {
  names: ['_configsvrMoveRange'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, '_configsvrMoveRange');
    await ctx.node.catalogManager.migrations.move({
      ns, toShard: requireString(cmd, 'toShard'), min: optionalDoc(cmd, 'min'), max: optionalDoc(cmd, 'max'), find: optionalDoc(cmd, 'find'),
      bounds: Array.isArray(cmd.bounds) ? (cmd.bounds as Doc[]) : undefined, waitForDelete: optionalBool(cmd, 'waitForDelete') ?? false,
    });
    return { ok: 1 };
  },
};

export const configsvrCommitChunkMigrationCommand: CommandDefinition<CatalogNode> = {
  names: ['_configsvrCommitChunkMigration'],
  adminOnly: true,
  async run(ctx, cmd) {
    const migrated = requireDoc(cmd, 'migratedChunk');
    if (!isPlainObject(migrated.min) || !isPlainObject(migrated.max)) throw new MongoError(ErrorCodes.BadValue, 'migratedChunk must have min and max');
    const reply = ctx.node.catalogManager.migrations.commit({
      ns: requireString(cmd, '_configsvrCommitChunkMigration'), fromShard: requireString(cmd, 'fromShard'), toShard: requireString(cmd, 'toShard'),
      migratedChunk: { min: migrated.min, max: migrated.max, lastmod: migrated.lastmod as Timestamp | undefined },
      fromShardCollectionVersion: shardVersionFromBSON(cmd.fromShardCollectionVersion), validAfter: cmd.validAfter as Timestamp | undefined,
      counts: optionalDoc(cmd, 'counts'),
    });
    // For the crash matrix (--enableTestCommands): the commit is written but not answered, so a
    // kill -9 here is a commit applied whose reply the donor never gets.
    await hangIfFailPointEnabled(ctx.node, 'hangBeforeCommitChunkMigrationReply', ctx.node.wallClock);
    return reply;
  },
};

export const configsvrEnsureChunkVersionIsGreaterThanCommand: CommandDefinition<CatalogNode> = {
  names: ['_configsvrEnsureChunkVersionIsGreaterThan'],
  adminOnly: true,
  run(ctx, cmd) {
    ctx.node.catalogManager.migrations.ensureChunkVersionIsGreaterThan(requireString(cmd, 'nss'), requireDoc(cmd, 'minKey'), requireDoc(cmd, 'maxKey'), shardVersionFromBSON(cmd.version));
    return { ok: 1 };
  },
};

export const configServerCommands: readonly ConfigCommand[] = [
  configsvrAddShardCommand, configsvrCreateDatabaseCommand, configsvrShardCollectionCommand,
  configsvrCommitChunkSplitCommand, configsvrCommitChunksMergeCommand,
  configsvrCommitDropCollectionCommand, configsvrCommitDropDatabaseCommand, configsvrRenameCollectionMetadataCommand, configsvrCommitRefineCollectionShardKeyCommand, configsvrMoveRangeCommand,
  configsvrCommitChunkMigrationCommand, configsvrEnsureChunkVersionIsGreaterThanCommand,
];
