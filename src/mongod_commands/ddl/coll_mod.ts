import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandDefinition } from '../command.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { collectionArg } from '../../command_layer/args.js';
import { parseValidationOptions } from '../crud/document_validator.js';
import { applyIndexModification, parseIndexModification } from './coll_mod_index.js';

// Arguments every command may carry, which collMod does not change anything with.
const GENERIC = new Set(['collMod', 'writeConcern', 'comment', 'lsid', 'txnNumber', 'maxTimeMS', 'apiVersion', 'apiStrict', 'apiDeprecationErrors', 'shardVersion', 'databaseVersion']);

// What change streams offer pre- and post-images by (src/change_streams/event_images.ts). A node
// without --replSet has no change streams, and refuses to turn them on as a standalone mongod does.
function checkPreAndPostImages(v: unknown, replicated: boolean): Doc {
  if (!isPlainObject(v)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'collMod.changeStreamPreAndPostImages' is the wrong type, expected type 'object'");
  if (typeof v.enabled !== 'boolean') throw new MongoError(40414, "BSON field 'changeStreamPreAndPostImages.enabled' is missing but a required field");
  if (v.enabled && !replicated) throw new MongoError(ErrorCodes.InvalidOptions, 'changeStreamPreAndPostImages collection option is not supported on standalone');
  return { enabled: v.enabled };
}

// collMod for a collection's validation options (validator, validationLevel, validationAction),
// changeStreamPreAndPostImages,
// and an index's expireAfterSeconds and hidden (`index`, coll_mod_index.ts); MongoDB's other
// modifications (views' pipelines, ...) are not implemented and answered InvalidOptions rather
// than ignored. Everything is checked before anything changes.
export const collModCommand: CommandDefinition = {
  names: ['collMod'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    for (const field of Object.keys(cmd)) {
      if (GENERIC.has(field) || field.startsWith('$') || field === 'validator' || field === 'validationLevel' || field === 'validationAction' || field === 'index' || field === 'changeStreamPreAndPostImages') continue;
      throw new MongoError(ErrorCodes.InvalidOptions, `collMod option '${field}' is not supported by docshard`);
    }
    const { storage } = ctx.node;
    const coll = storage.getCollection(ns);
    if (coll === undefined) {
      parseValidationOptions(cmd);
      throw new MongoError(ErrorCodes.NamespaceNotFound, `ns does not exist: ${ns}`);
    }
    const changes = parseValidationOptions(cmd, coll.entry.options);
    const images = cmd.changeStreamPreAndPostImages;
    if (images !== undefined) changes.changeStreamPreAndPostImages = checkPreAndPostImages(images, ctx.node.replication !== undefined);
    const indexChange = cmd.index === undefined ? undefined : parseIndexModification(coll, cmd.index);
    if (Object.keys(changes).length > 0) storage.setCollectionOptions(coll, { ...coll.entry.options, ...changes });
    const reply = indexChange === undefined ? {} : applyIndexModification(storage, coll, indexChange);
    return { ...reply, ok: 1 };
  },
};
