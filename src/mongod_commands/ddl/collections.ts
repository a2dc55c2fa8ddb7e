import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { compileFilter } from '../../query/match/matcher.js';
import { splitNamespace } from '../../storage/catalog_entry.js';
import type { CommandDefinition, MongodServices } from '../command.js';
import { RANGE_DELETIONS_NS } from '../../migration/range_deletion_task.js';
import { collectionArg, optionalBool, optionalDoc, requireString } from '../../command_layer/args.js';
import { cursorReply } from '../../command_layer/cursor_manager.js';
import { createView, dropView, getView, listViews } from '../views/view_catalog.js';
import { parseValidationOptions } from '../crud/document_validator.js';
import { checkCappedOptions } from '../../storage/capped.js';
import { fullCollationSpec } from '../../bson/collation.js';

export const createCommand: CommandDefinition = {
  names: ['create'],
  run(ctx, cmd) {
    const name = collectionArg(cmd);
    if (cmd.viewOn !== undefined) {
      createView(ctx.node.storage, `${ctx.db}.${name}`, cmd.viewOn, cmd.pipeline);
      return { ok: 1 };
    }
    if (getView(ctx.node.storage, `${ctx.db}.${name}`) !== undefined) throw new MongoError(ErrorCodes.NamespaceExists, `Namespace ${ctx.db}.${name} already exists`);
    const options: Doc = {};
    for (const [k, v] of Object.entries(cmd)) {
      if (k === 'create' || k.startsWith('$') || ['lsid', 'txnNumber', 'writeConcern', 'comment', 'apiVersion', 'apiStrict', 'apiDeprecationErrors', 'maxTimeMS', 'shardVersion', 'databaseVersion'].includes(k)) continue;
      options[k] = v;
    }
    parseValidationOptions(cmd);
    checkCappedOptions(options);
    refuseUnimplementedOptions(options);
    if (options.collation !== undefined) {
      const collation = fullCollationSpec(options.collation);
      if (collation === undefined) delete options.collation;
      else options.collation = collation;
    }
    ctx.node.storage.createCollection(`${ctx.db}.${name}`, options);
    return { ok: 1 };
  },
};

// Collection kinds docshard does not have: refused rather than created as plain collections.
function refuseUnimplementedOptions(options: Doc): void {
  if (options.timeseries !== undefined) {
    throw new MongoError(ErrorCodes.NotImplemented, 'Time series collections are not implemented in docshard: create a plain collection and index its time field.');
  }
  if (options.clusteredIndex !== undefined) {
    throw new MongoError(ErrorCodes.NotImplemented, 'Clustered collections are not implemented in docshard: every collection keeps its _id index.');
  }
}

export const dropCommand: CommandDefinition = {
  names: ['drop'],
  run(ctx, cmd) {
    const reply = dropCollectionLocally(ctx.node, `${ctx.db}.${collectionArg(cmd)}`);
    if (reply === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, 'ns not found');
    return reply;
  },
};

// The drop a shard makes of its own copy (the drop command's, and a DDL participant's): the
// collection or view, and the range deletion tasks of the namespace. Undefined: nothing was there.
export function dropCollectionLocally(node: MongodServices, ns: string): Doc | undefined {
  const { storage } = node;
  forgetRangeDeletions(node, { nss: ns });
  const coll = storage.getCollection(ns);
  if (!coll) return dropView(storage, ns) ? { ns, ok: 1 } : undefined;
  const nIndexesWas = coll.indexes.length;
  storage.dropCollection(ns);
  return { nIndexesWas, ns, ok: 1 };
}

export const dropDatabaseCommand: CommandDefinition = {
  names: ['dropDatabase'],
  run(ctx) {
    dropDatabaseLocally(ctx.node, ctx.db);
    return { dropped: ctx.db, ok: 1 };
  },
};

export function dropDatabaseLocally(node: MongodServices, db: string): void {
  const { storage } = node;
  forgetRangeDeletions(node, { nss: { $regex: `^${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.` } });
  storage.dropDatabase(db);
}

// A dropped collection's orphans go with it; a task left behind would delete (and count) documents
// of a new collection created under the same name.
function forgetRangeDeletions(node: MongodServices, filter: Doc): void {
  node.local.write((w) => w.delete(RANGE_DELETIONS_NS, filter));
}

// Reads only the catalog and opens a cursor (a migration's recipient asks the donor for it).
export const listCollectionsCommand: CommandDefinition<Pick<MongodServices, 'storage' | 'cursors'>> = {
  names: ['listCollections'],
  run(ctx, cmd) {
    const filter = optionalDoc(cmd, 'filter') ?? {};
    const nameOnly = optionalBool(cmd, 'nameOnly') ?? false;
    const matcher = compileFilter(filter);
    const docs: { doc: Doc }[] = [];
    for (const coll of ctx.node.storage.listCollections(ctx.db)) {
      const name = splitNamespace(coll.ns).coll;
      // A collection without an _id index (local.oplog.rs) lists none, as in MongoDB.
      const idIndex = coll.index('_id_')?.entry.spec;
      const full: Doc = { name, type: 'collection', options: coll.entry.options, info: { readOnly: false, uuid: coll.entry.uuid }, ...(idIndex === undefined ? {} : { idIndex }) };
      if (!matcher.matches(full)) continue;
      docs.push({ doc: nameOnly ? { name, type: 'collection' } : full });
    }
    for (const view of listViews(ctx.node.storage, ctx.db)) {
      const name = splitNamespace(view.ns).coll;
      const full: Doc = { name, type: 'view', options: { viewOn: splitNamespace(view.viewOn).coll, pipeline: view.pipeline }, info: { readOnly: true } };
      if (!matcher.matches(full)) continue;
      docs.push({ doc: nameOnly ? { name, type: 'view' } : full });
    }
    docs.sort((a, b) => String(a.doc.name).localeCompare(String(b.doc.name)));
    const ns = `${ctx.db}.$cmd.listCollections`;
    const cursor = optionalDoc(cmd, 'cursor') ?? {};
    const batchSize = typeof cursor.batchSize === 'number' ? cursor.batchSize : undefined;
    return cursorReply(ns, ctx.node.cursors.firstBatch(ns, docs, batchSize), 'firstBatch');
  },
};

export const listDatabasesCommand: CommandDefinition = {
  names: ['listDatabases'],
  adminOnly: true,
  run(ctx, cmd) {
    const nameOnly = optionalBool(cmd, 'nameOnly') ?? false;
    const matcher = compileFilter(optionalDoc(cmd, 'filter') ?? {});
    const { storage } = ctx.node;
    const databases: Doc[] = [];
    let totalSize = 0;
    for (const name of storage.listDatabases()) {
      const sizeOnDisk = storage.listCollections(name).reduce((n, c) => n + storage.stats.get(c.entry.id).size, 0);
      const entry: Doc = { name, sizeOnDisk, empty: false };
      if (!matcher.matches(entry)) continue;
      totalSize += sizeOnDisk;
      databases.push(nameOnly ? { name } : entry);
    }
    return nameOnly ? { databases, ok: 1 } : { databases, totalSize, totalSizeMb: Math.floor(totalSize / 1024 / 1024), ok: 1 };
  },
};

export const renameCollectionCommand: CommandDefinition = {
  names: ['renameCollection'],
  adminOnly: true,
  run(ctx, cmd) {
    const from = requireString(cmd, 'renameCollection');
    const to = requireString(cmd, 'to');
    const dropTarget = optionalBool(cmd, 'dropTarget') ?? false;
    for (const ns of [from, to]) {
      if (!ns.includes('.') || ns.endsWith('.') || ns.startsWith('.')) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
    }
    const { storage } = ctx.node;
    if (!storage.getCollection(from)) throw new MongoError(ErrorCodes.NamespaceNotFound, `Source collection ${from} does not exist`);
    if (from === to) throw new MongoError(ErrorCodes.IllegalOperation, "Can't rename a collection to itself");
    if (storage.getCollection(to)) {
      if (!dropTarget) throw new MongoError(ErrorCodes.NamespaceExists, 'target namespace exists');
      storage.dropCollection(to);
    }
    storage.renameCollection(from, to);
    return { ok: 1 };
  },
};
