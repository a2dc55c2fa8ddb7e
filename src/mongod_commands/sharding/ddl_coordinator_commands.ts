import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import type { ShardingDDLCoordinatorService } from '../../ddl/sharding_ddl_coordinator_service.js';
import type { CommandContext, CommandDefinition, ShardServices } from '../command.js';
import { shardOnlyMessage } from './shard_only_refusals.js';
import { collectionArg, optionalBool, optionalNumber, requireDoc, requireString } from '../../command_layer/args.js';

// What a router sends a database's primary shard for a DDL (MongoDB's _shardsvr* DDL commands):
// the primary runs the operation's coordinator (src/ddl), or joins the one running. The dispatcher
// has checked the request's databaseVersion: a shard that is no longer the primary answers
// StaleDbVersion and the router goes to the new one.

// Registered only in a shard's table (a config server's refuses them: shard_only_refusals.ts).
type ShardCommand = CommandDefinition<ShardServices>;

function coordinators(ctx: CommandContext<ShardServices>, name: string): ShardingDDLCoordinatorService {
  if (!ctx.node.sharding.state.enabled) throw new MongoError(ErrorCodes.IllegalOperation, shardOnlyMessage(name));
  return ctx.node.ddl.coordinators;
}

function databaseVersionOf(cmd: Doc): Doc | undefined {
  return isPlainObject(cmd.databaseVersion) ? cmd.databaseVersion : undefined;
}

// {_shardsvrDropCollection: coll}
export const shardsvrDropCollectionCommand: ShardCommand = {
  names: ['_shardsvrDropCollection'],
  async run(ctx, cmd) {
    const service = coordinators(ctx, '_shardsvrDropCollection');
    const coll = collectionArg(cmd);
    const result = await service.run({
      id: { namespace: `${ctx.db}.${coll}`, operationType: 'dropCollection' }, request: { _shardsvrDropCollection: coll }, databaseVersion: databaseVersionOf(cmd),
    });
    return { ...result, ok: 1 };
  },
};

// {_shardsvrDropDatabase: 1}
export const shardsvrDropDatabaseCommand: ShardCommand = {
  names: ['_shardsvrDropDatabase'],
  async run(ctx, cmd) {
    const service = coordinators(ctx, '_shardsvrDropDatabase');
    const result = await service.run({ id: { namespace: ctx.db, operationType: 'dropDatabase' }, request: { _shardsvrDropDatabase: 1 }, databaseVersion: databaseVersionOf(cmd) });
    return { ...result, ok: 1 };
  },
};

// {_shardsvrCreateCollection: coll, shardKey, unique, numInitialChunks, presplitHashedZones}: the
// primary's CreateCollectionCoordinator shards the collection; a second identical request joins it.
export const shardsvrCreateCollectionCommand: ShardCommand = {
  names: ['_shardsvrCreateCollection'],
  async run(ctx, cmd) {
    const service = coordinators(ctx, '_shardsvrCreateCollection');
    const coll = collectionArg(cmd);
    const numInitialChunks = optionalNumber(cmd, 'numInitialChunks');
    const request = {
      _shardsvrCreateCollection: coll, shardKey: requireDoc(cmd, 'shardKey'), unique: optionalBool(cmd, 'unique') ?? false,
      presplitHashedZones: optionalBool(cmd, 'presplitHashedZones') ?? false, ...(numInitialChunks === undefined ? {} : { numInitialChunks }),
    };
    const result = await service.run({ id: { namespace: `${ctx.db}.${coll}`, operationType: 'createCollection' }, request, databaseVersion: databaseVersionOf(cmd) });
    return { ...result, ok: 1 };
  },
};

// {_shardsvrRenameCollection: coll, to, dropTarget}
export const shardsvrRenameCollectionCommand: ShardCommand = {
  names: ['_shardsvrRenameCollection'],
  async run(ctx, cmd) {
    const service = coordinators(ctx, '_shardsvrRenameCollection');
    const coll = collectionArg(cmd);
    const to = requireString(cmd, 'to');
    const request = { _shardsvrRenameCollection: coll, to, dropTarget: optionalBool(cmd, 'dropTarget') ?? false };
    const result = await service.run({ id: { namespace: `${ctx.db}.${coll}`, operationType: 'renameCollection' }, request, databaseVersion: databaseVersionOf(cmd) });
    return { ...result, ok: 1 };
  },
};

// {_shardsvrRefineCollectionShardKey: coll, newShardKey}
export const shardsvrRefineCollectionShardKeyCommand: ShardCommand = {
  names: ['_shardsvrRefineCollectionShardKey'],
  async run(ctx, cmd) {
    const service = coordinators(ctx, '_shardsvrRefineCollectionShardKey');
    const coll = collectionArg(cmd);
    const request = { _shardsvrRefineCollectionShardKey: coll, newShardKey: requireDoc(cmd, 'newShardKey') };
    const result = await service.run({ id: { namespace: `${ctx.db}.${coll}`, operationType: 'refineCollectionShardKey' }, request, databaseVersion: databaseVersionOf(cmd) });
    return { ...result, ok: 1 };
  },
};

// {_shardsvrReshardCollection: coll, key, unique?, numInitialChunks?, zones?, forceRedistribution?,
// collation?, provenance?, shardDistribution?}: the router's reshardCollection, moveCollection or
// unshardCollection, answered once the resharding has ended. A moveCollection first registers the
// collection in the sharding catalog as unsplittable (a CreateCollectionCoordinator, as MongoDB
// 8.0 does), so that the resharding finds it tracked with its one chunk on this shard.
export const shardsvrReshardCollectionCommand: ShardCommand = {
  names: ['_shardsvrReshardCollection'],
  async run(ctx, cmd) {
    const service = coordinators(ctx, '_shardsvrReshardCollection');
    const coll = collectionArg(cmd);
    if (ctx.db === 'config') throw new MongoError(ErrorCodes.IllegalOperation, 'A collection of the config database cannot be resharded, moved or unsharded');
    if (cmd.provenance === 'moveCollection') {
      if (coll.startsWith('system.resharding.')) throw new MongoError(ErrorCodes.IllegalOperation, 'A temporary resharding collection cannot be moved');
      const register = { _shardsvrCreateCollection: coll, shardKey: { _id: 1 }, unique: false, presplitHashedZones: false, unsplittable: true, registerExistingCollectionInGlobalCatalog: true };
      await service.run({ id: { namespace: `${ctx.db}.${coll}`, operationType: 'createCollection' }, request: register, databaseVersion: databaseVersionOf(cmd) });
    }
    const options = Object.fromEntries(RESHARD_OPTIONS.filter((f) => cmd[f] !== undefined).map((f) => [f, cmd[f]]));
    const request = { _shardsvrReshardCollection: coll, key: requireDoc(cmd, 'key'), ...options };
    const result = await service.run({ id: { namespace: `${ctx.db}.${coll}`, operationType: 'reshardCollection' }, request, databaseVersion: databaseVersionOf(cmd) });
    return { ...result, ok: 1 };
  },
};

const RESHARD_OPTIONS = ['unique', 'numInitialChunks', 'zones', 'forceRedistribution', 'collation', 'provenance', 'shardDistribution'];

// {_shardsvrCollMod: coll, collModRequest}
export const shardsvrCollModCommand: ShardCommand = {
  names: ['_shardsvrCollMod'],
  async run(ctx, cmd) {
    const service = coordinators(ctx, '_shardsvrCollMod');
    const coll = collectionArg(cmd);
    const request = { _shardsvrCollMod: coll, collModRequest: requireDoc(cmd, 'collModRequest') };
    const result = await service.run({ id: { namespace: `${ctx.db}.${coll}`, operationType: 'collMod' }, request, databaseVersion: databaseVersionOf(cmd) });
    return { ...result, ok: 1 };
  },
};

export const ddlCoordinatorCommands: readonly ShardCommand[] = [
  shardsvrCollModCommand,
  shardsvrDropCollectionCommand, shardsvrDropDatabaseCommand, shardsvrCreateCollectionCommand, shardsvrRenameCollectionCommand,
  shardsvrRefineCollectionShardKeyCommand, shardsvrReshardCollectionCommand,
];
