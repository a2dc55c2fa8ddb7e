import { Binary } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalDoc, requireArray } from '../../command_layer/args.js';
import { checkAgainstExisting, validateIndexSpec } from '../ddl/index_spec.js';
import { checkDDLCoordinatorSession } from './ddl_participant_session.js';

// _shardsvrCreateCollectionParticipant {<coll>, indexes, options, collectionUUID}: a shard other
// than the primary that receives initial chunks of a collection being sharded creates it with the
// UUID of the primary's copy, which the primary's CreateCollectionCoordinator commits to
// config.collections (a collection created by createIndexes would get one of its own). A
// collection already there keeps its UUID and gains the indexes it lacks: it was made outside the
// cluster's DDL, and checkMetadataConsistency reports it, as MongoDB's does.
export const createCollectionParticipantCommand: CommandDefinition = {
  names: ['_shardsvrCreateCollectionParticipant'],
  retryableWrite: true,
  run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrCreateCollectionParticipant');
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    if (!(cmd.collectionUUID instanceof Binary)) throw new MongoError(ErrorCodes.BadValue, 'collectionUUID must be a UUID');
    const specs = requireArray(cmd, 'indexes').map(validateIndexSpec);
    const { storage } = ctx.node;
    const coll = storage.getCollection(ns) ?? storage.createCollection(ns, optionalDoc(cmd, 'options') ?? {}, cmd.collectionUUID);
    const fresh = specs.filter((s) => checkAgainstExisting(coll, s) === 'new');
    if (fresh.length > 0) storage.createIndexes(coll, fresh);
    return { ok: 1 };
  },
};
