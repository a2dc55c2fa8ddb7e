import os from 'node:os';
import type { CappedLimits } from '../../storage/capped.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, toDouble, type Doc } from '../../bson/values.js';
import type { StorageEngine } from '../../storage/storage_engine.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg } from '../../command_layer/args.js';
import { LocalCollections } from '../../query/exec/local_collection.js';
import { orphansOf } from '../../migration/range_orphans.js';

// Index sizes are estimated from entry counts: LMDB keeps one B-tree for the whole node, so
// there is no per-index file size to report.
function indexSizes(storage: StorageEngine, ns: string): Record<string, number> {
  const coll = storage.getCollection(ns);
  const out: Record<string, number> = {};
  if (!coll) return out;
  const count = storage.stats.get(coll.entry.id).count;
  for (const index of coll.indexes) out[index.name] = count * 32;
  return out;
}

// `count` and `size` are everything stored, as in mongod; `numOrphanDocs` (MongoDB's) is how many
// of those this shard holds without owning them, from its range deletion tasks, and
// `orphanedSizeBytes` (docshard's) their exact size.
export function collectionStatsDoc(storage: StorageEngine, ns: string, spec: Doc, localTime: Date): Doc {
  const coll = storage.getCollection(ns);
  const { count, size } = coll ? storage.stats.get(coll.entry.id) : { count: 0, size: 0 };
  const sizes = indexSizes(storage, ns);
  const totalIndexSize = Object.values(sizes).reduce((a, b) => a + b, 0);
  const out: Doc = { ns, host: `${os.hostname()}`, localTime };
  if (spec.storageStats !== undefined) {
    const orphans = orphansOf(new LocalCollections(storage), ns);
    out.storageStats = {
      size, count, numOrphanDocs: orphans.docs, orphanedSizeBytes: orphans.bytes, avgObjSize: count ? Math.floor(size / count) : 0, storageSize: size,
      nindexes: coll?.indexes.length ?? 0, totalIndexSize, totalSize: size + totalIndexSize, indexSizes: sizes,
    };
  }
  if (spec.count !== undefined) out.count = count;
  return out;
}

// collStats reports a capped collection's bounds as `max` and `maxSize` (scaled, as the sizes are).
function cappedStats(capped: CappedLimits | undefined, scale: number): Doc {
  if (!capped) return { capped: false };
  return { capped: true, ...(capped.max !== undefined ? { max: capped.max } : {}), maxSize: Math.floor(capped.size / scale) };
}

export const collStatsCommand: CommandDefinition = {
  names: ['collStats'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const { storage } = ctx.node;
    const coll = storage.getCollection(ns);
    if (!coll) throw new MongoError(ErrorCodes.NamespaceNotFound, `Collection [${ns}] not found.`);
    const scale = isNumber(cmd.scale) ? Math.max(1, toDouble(cmd.scale)) : 1;
    const { count, size } = storage.stats.get(coll.entry.id);
    const sizes = indexSizes(storage, ns);
    const totalIndexSize = Object.values(sizes).reduce((a, b) => a + b, 0);
    const scaled: Record<string, number> = {};
    for (const [k, v] of Object.entries(sizes)) scaled[k] = Math.floor(v / scale);
    return {
      ns, count, size: Math.floor(size / scale), numOrphanDocs: orphansOf(ctx.node.local, ns).docs, avgObjSize: count ? Math.floor(size / count) : 0, storageSize: Math.floor(size / scale),
      nindexes: coll.indexes.length, totalIndexSize: Math.floor(totalIndexSize / scale), totalSize: Math.floor((size + totalIndexSize) / scale),
      indexSizes: scaled, scaleFactor: scale, ...cappedStats(coll.capped, scale), ok: 1,
    };
  },
};

export const dbStatsCommand: CommandDefinition = {
  names: ['dbStats', 'dbstats'],
  run(ctx) {
    const { storage } = ctx.node;
    let objects = 0;
    let dataSize = 0;
    let indexes = 0;
    let indexSize = 0;
    const colls = storage.listCollections(ctx.db);
    for (const c of colls) {
      const s = storage.stats.get(c.entry.id);
      objects += s.count;
      dataSize += s.size;
      indexes += c.indexes.length;
      indexSize += Object.values(indexSizes(storage, c.ns)).reduce((a, b) => a + b, 0);
    }
    return {
      db: ctx.db, collections: colls.length, views: 0, objects, avgObjSize: objects ? dataSize / objects : 0, dataSize,
      storageSize: dataSize, indexes, indexSize, totalSize: dataSize + indexSize, scaleFactor: 1, fsUsedSize: 0, fsTotalSize: 0, ok: 1,
    };
  },
};
