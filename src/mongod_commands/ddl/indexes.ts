import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { compareValues } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import type { CommandDefinition, MongodServices } from '../command.js';
import { collectionArg, requireArray } from '../../command_layer/args.js';
import { cursorReply } from '../../command_layer/cursor_manager.js';
import { checkAgainstExisting, unindexableCollation, validateIndexSpec } from './index_spec.js';
import { indexableCollation, parseCollation } from '../../bson/collation.js';

export const createIndexesCommand: CommandDefinition = {
  names: ['createIndexes'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const raw = requireArray(cmd, 'indexes');
    if (raw.length === 0) throw new MongoError(ErrorCodes.BadValue, 'Must specify at least one index to create');
    const { storage } = ctx.node;
    const specs = raw.map((r) => withCollectionCollation(validateIndexSpec(r), r, storage.getCollection(ns)?.entry.options.collation));
    if (collectionArg(cmd).startsWith('system.') && raw.some((r) => isPlainObject(r) && r.hidden !== undefined)) {
      throw new MongoError(ErrorCodes.BadValue, "Can't hide index on system collection");
    }
    const { coll, created } = storage.ensureCollection(ns);
    const before = coll.indexes.length;
    const fresh = specs.filter((s) => checkAgainstExisting(coll, s) === 'new');
    for (let i = 0; i < fresh.length; i++) {
      for (let j = i + 1; j < fresh.length; j++) {
        if (fresh[i]!.name === fresh[j]!.name) throw new MongoError(ErrorCodes.IndexKeySpecsConflict, `Cannot create two indexes with the same name: ${String(fresh[i]!.name)}`);
      }
    }
    if (fresh.length > 0) storage.createIndexes(coll, fresh);
    const reply: Doc = { numIndexesBefore: before, numIndexesAfter: coll.indexes.length, createdCollectionAutomatically: created };
    if (fresh.length === 0) reply.note = 'all indexes already exist';
    reply.ok = 1;
    return reply;
  },
};

// An index created without a collation of its own takes the collection's default, as in MongoDB
// (one given as {locale: 'simple'} keeps the simple collation). A default docshard cannot key an
// index by (index_spec.ts) leaves a non-unique index simple, which queries under the collation do
// not bound strings by, and refuses a unique one, whose constraint would not follow it.
function withCollectionCollation(spec: Doc, raw: unknown, collectionCollation: unknown): Doc {
  if (collectionCollation === undefined || (isPlainObject(raw) && raw.collation !== undefined)) return spec;
  if (indexableCollation(parseCollation(collectionCollation)!)) return { ...spec, collation: collectionCollation };
  if (spec.unique === true) throw unindexableCollation(collectionCollation as Doc);
  return spec;
}

// Reads only the catalog and opens a cursor (a migration's recipient asks the donor for it).
export const listIndexesCommand: CommandDefinition<Pick<MongodServices, 'storage' | 'cursors'>> = {
  names: ['listIndexes'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const coll = ctx.node.storage.getCollection(ns);
    if (!coll) throw new MongoError(ErrorCodes.NamespaceNotFound, `ns does not exist: ${ns}`);
    const cursor = isPlainObject(cmd.cursor) ? cmd.cursor : {};
    const batchSize = typeof cursor.batchSize === 'number' ? cursor.batchSize : undefined;
    const docs = coll.indexes.map((i) => ({ doc: i.entry.spec }));
    return cursorReply(ns, ctx.node.cursors.firstBatch(ns, docs, batchSize), 'firstBatch');
  },
};

export const dropIndexesCommand: CommandDefinition = {
  names: ['dropIndexes', 'deleteIndexes'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const { storage } = ctx.node;
    const coll = storage.getCollection(ns);
    if (!coll) throw new MongoError(ErrorCodes.NamespaceNotFound, `ns not found ${ns}`);
    const nIndexesWas = coll.indexes.length;
    const which = cmd.index;
    let names: string[];
    if (which === '*') {
      names = coll.indexes.map((i) => i.name).filter((n) => n !== '_id_');
    } else if (typeof which === 'string') {
      names = [which];
    } else if (Array.isArray(which)) {
      names = which.map(String);
    } else if (isPlainObject(which)) {
      // Indexes on one key under different collations are told apart by name only.
      const found = coll.indexes.filter((i) => compareValues(i.keyPattern, which) === 0);
      if (found.length === 0) throw new MongoError(ErrorCodes.IndexNotFound, `can't find index with key: ${JSON.stringify(which)}`);
      if (found.length > 1) {
        throw new MongoError(ErrorCodes.AmbiguousIndexKeyPattern, `${found.length} indexes found for key: ${JSON.stringify(which)}, identify by name instead. Conflicting indexes: ${JSON.stringify(found[0]!.entry.spec)}, ${JSON.stringify(found[1]!.entry.spec)}`);
      }
      names = [found[0]!.name];
    } else {
      throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'dropIndexes.index' is the wrong type, expected types '[string, object, array]'");
    }
    for (const name of names) {
      if (name === '_id_') throw new MongoError(ErrorCodes.InvalidOptions, 'cannot drop _id index');
      if (!coll.index(name)) throw new MongoError(ErrorCodes.IndexNotFound, `index not found with name [${name}]`);
    }
    for (const name of names) storage.dropIndex(coll, name);
    return { nIndexesWas, ok: 1 };
  },
};
