import { Binary } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { valueAtPath } from '../../catalog/shard_key_pattern.js';
import { checkOk, fetchAll } from '../../wire/remote_cursor.js';
import type { ChunkManager } from '../chunk_manager.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { validateAnalyzedNamespace } from '../query_analysis/analyzed_namespace.js';
import { configureQueryAnalyzerReply, parseConfigureQueryAnalyzer, queryAnalyzerWrite } from '../query_analysis/analyzer_configuration.js';
import { parseAnalyzeShardKey, type AnalyzeShardKeyRequest } from '../query_analysis/analyze_shard_key_request.js';
import {
  averageDocumentSize, compatibleIndex, firstRecordIds, inKeyOrder, isUniqueKey, keyGroupStage, mergeKeyFrequencies, monotonicityOf,
  mostCommonValues, shardKeyIndex, type IndexDescription, type KeyFrequency,
} from '../query_analysis/key_characteristics.js';
import { rangesTable, ReadDistribution, splitPointsFor, WriteDistribution } from '../query_analysis/read_write_distribution.js';
import { READ_COMMANDS } from '../query_analysis/sampled_query.js';
import { writeSampledQueries } from '../query_analysis/query_analysis_jobs.js';

// configureQueryAnalyzer and analyzeShardKey (7.0) on the router. mongos hands both to a shard
// (the database's primary, or one owning chunks); here the router runs them itself, over what
// the shards and the config server answer: the catalog and the analyzers on the config server,
// each shard's documents read unversioned (orphans included, as MongoDB reads them at readConcern
// 'available'), the sampled queries from config.sampledQueries.

// analyzeShardKeyCharacteristicsDefaultSampleSize's default.
const DEFAULT_SAMPLE_SIZE = 10_000_000;

interface AnalyzedCollection {
  uuid: unknown;
  cm: ChunkManager | undefined;
  primary: string;
  // The shards holding its documents: those owning chunks, or the primary shard.
  shards: string[];
}

async function analyzedCollection(ctx: RouterContext, db: string, coll: string): Promise<AnalyzedCollection> {
  const { catalogCache, shardRegistry, client } = ctx.router;
  const ns = `${db}.${coll}`;
  const database = await catalogCache.getDatabase(db, { create: false });
  if (database === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `Cannot analyze a shard key for a non-existing collection ${ns}`);
  const cm = await catalogCache.getCollection(ns);
  const [info] = await fetchAll(client, await shardRegistry.host(database.primary), db, { listCollections: 1, filter: { name: coll } });
  if (info?.type === 'view') throw new MongoError(ErrorCodes.CommandNotSupportedOnView, `Namespace ${ns} is a view, not a collection`);
  const uuid = cm?.uuid ?? (isPlainObject(info?.info) ? info.info.uuid : undefined);
  if (uuid === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `Cannot analyze a shard key for a non-existing collection ${ns}`);
  return { uuid, cm, primary: database.primary, shards: cm === undefined ? [database.primary] : [...cm.getAllShardIds()].sort() };
}

function sameUuid(a: unknown, b: unknown): boolean {
  return a instanceof Binary && b instanceof Binary && a.toString('hex') === b.toString('hex');
}

export const configureQueryAnalyzerCommand: RouterCommand = {
  names: ['configureQueryAnalyzer'],
  adminOnly: true,
  async run(ctx, cmd) {
    const request = parseConfigureQueryAnalyzer(cmd, ctx.router.options.enableTestCommands);
    const { db, coll } = validateAnalyzedNamespace(request.ns);
    const { uuid } = await analyzedCollection(ctx, db, coll);
    const now = ctx.router.wallClock.now();
    const reply = checkOk(await ctx.router.client.command(ctx.router.options.configHost, 'config', queryAnalyzerWrite(request, uuid, new Date(now))));
    // The analyzer's startTime stays when it was on already for this collection, as the write keeps it.
    const before = isPlainObject(reply.value) ? reply.value : undefined;
    const startTime = before?.mode === 'full' && sameUuid(before.collUuid, uuid) && before.startTime instanceof Date ? before.startTime : new Date(now);
    const analyzer = request.samplesPerSecond === undefined ? undefined : { ns: request.ns, collUuid: uuid, samplesPerSecond: request.samplesPerSecond, startTime };
    ctx.router.queryAnalysis.setOne(request.ns, analyzer, now);
    return configureQueryAnalyzerReply(request, reply.value, uuid, sameUuid);
  },
};

export const analyzeShardKeyCommand: RouterCommand = {
  names: ['analyzeShardKey'],
  adminOnly: true,
  async run(ctx, cmd) {
    const request = parseAnalyzeShardKey(cmd);
    const target = await analyzedCollection(ctx, request.db, request.coll);
    const hosts = await Promise.all(target.shards.map((s) => ctx.router.shardRegistry.host(s)));
    const indexes = (await fetchAll(ctx.router.client, hosts[0]!, request.db, { listIndexes: request.coll })).filter((i) => isPlainObject(i.key)) as unknown as IndexDescription[];
    const reply: Doc = {};
    let values: KeyFrequency[] | undefined;
    if (request.keyCharacteristics) {
      const index = compatibleIndex(indexes, request.key);
      if (index === undefined) {
        if (!request.readWriteDistribution) {
          throw new MongoError(ErrorCodes.IllegalOperation, 'Cannot analyze the characteristics of a shard key that does not have a supporting index');
        }
      } else {
        const characteristics = await keyCharacteristics(ctx, request, target, hosts, index, indexes);
        values = characteristics.values;
        reply.keyCharacteristics = characteristics.metrics;
      }
    }
    if (request.readWriteDistribution) {
      Object.assign(reply, await readWriteDistribution(ctx, request, target, values ?? await keyFrequencies(ctx, request, hosts, undefined)));
    }
    return { ...reply, ok: 1 };
  },
};

interface CollectionStats {
  count: number;
  size: number;
  numOrphanDocs: number;
  perShard: number[];
}

async function collectionStats(ctx: RouterContext, request: AnalyzeShardKeyRequest, hosts: readonly string[]): Promise<CollectionStats> {
  const stats: CollectionStats = { count: 0, size: 0, numOrphanDocs: 0, perShard: [] };
  for (const host of hosts) {
    const [doc] = await fetchAll(ctx.router.client, host, request.db, { aggregate: request.coll, pipeline: [{ $collStats: { storageStats: {} } }], cursor: {} });
    const storage = isPlainObject(doc?.storageStats) ? doc.storageStats : {};
    const count = Number(storage.count ?? 0);
    stats.count += count;
    stats.size += Number(storage.size ?? 0);
    stats.numOrphanDocs += Number(storage.numOrphanDocs ?? 0);
    stats.perShard.push(count);
  }
  return stats;
}

// The key's distinct values and their frequencies over every shard's documents, or over a
// $sample of each shard's share of `sampled` documents.
async function keyFrequencies(ctx: RouterContext, request: AnalyzeShardKeyRequest, hosts: readonly string[], sample: { sampled: number; stats: CollectionStats } | undefined): Promise<KeyFrequency[]> {
  const fields = request.pattern.fields;
  const groups = await Promise.all(hosts.map((host, i) => {
    const share = sample === undefined || sample.sampled >= sample.stats.count ? undefined : Math.round((sample.stats.perShard[i]! * sample.sampled) / sample.stats.count);
    const pipeline = share === undefined ? [keyGroupStage(fields)] : [{ $sample: { size: share } }, keyGroupStage(fields)];
    return fetchAll(ctx.router.client, host, request.db, { aggregate: request.coll, pipeline, cursor: {}, allowDiskUse: true });
  }));
  return mergeKeyFrequencies(fields, groups);
}

async function keyCharacteristics(
  ctx: RouterContext, request: AnalyzeShardKeyRequest, target: AnalyzedCollection, hosts: readonly string[], index: IndexDescription, indexes: readonly IndexDescription[],
): Promise<{ values: KeyFrequency[] | undefined; metrics: Doc }> {
  const stats = await collectionStats(ctx, request, hosts);
  if (stats.count === 0) throw new MongoError(ErrorCodes.IllegalOperation, 'Cannot analyze the characteristics of a shard key for an empty collection');
  const wanted = request.sampleSize ?? (request.sampleRate === undefined ? DEFAULT_SAMPLE_SIZE : Math.ceil(request.sampleRate * stats.count));
  const sampled = Math.min(stats.count, wanted);
  const values = await keyFrequencies(ctx, request, hosts, { sampled, stats });
  const fields = request.pattern.fields;
  const metrics: Doc = {
    numDocsTotal: stats.count,
    ...(target.cm === undefined ? {} : { numOrphanDocs: stats.numOrphanDocs }),
    avgDocSizeBytes: averageDocumentSize(stats.size, stats.count),
    numDocsSampled: values.reduce((n, v) => n + v.frequency, 0),
    isUnique: isUniqueKey(index, request.key),
    numDistinctValues: values.length,
    mostCommonValues: mostCommonValues(fields, values),
    monotonicity: monotonicityOf(request.pattern, await recordIdsInKeyOrder(ctx, request, target, indexes)),
  };
  // Only values of every document split the ranges of the read and write distribution.
  return { values: sampled === stats.count ? values : undefined, metrics };
}

// On one shard (the primary when it holds documents, as mongos sends the command there), the
// record id of each distinct key value in key order, read through the key's own index.
async function recordIdsInKeyOrder(ctx: RouterContext, request: AnalyzeShardKeyRequest, target: AnalyzedCollection, indexes: readonly IndexDescription[]): Promise<number[] | undefined> {
  const index = shardKeyIndex(indexes, request.pattern);
  if (index === undefined || request.pattern.isHashed) return undefined;
  const shard = target.shards.includes(target.primary) ? target.primary : target.shards[0]!;
  const fields = request.pattern.fields;
  const docs = await fetchAll(ctx.router.client, await ctx.router.shardRegistry.host(shard), request.db, {
    find: request.coll, filter: {}, hint: index.key, sort: Object.fromEntries(fields.map((f) => [f, 1])),
    projection: Object.fromEntries([['_id', 0], ...fields.map((f) => [f, 1])]), showRecordId: true,
  });
  return firstRecordIds(docs.map((doc) => ({ values: fields.map((f) => valueAtPath(doc, f)), recordId: Number(doc.$recordId) })));
}

async function readWriteDistribution(ctx: RouterContext, request: AnalyzeShardKeyRequest, target: AnalyzedCollection, values: readonly KeyFrequency[]): Promise<Doc> {
  const table = rangesTable(request.ns, request.key, splitPointsFor(inKeyOrder(request.pattern, values)));
  await writeSampledQueries(ctx.router);
  const samples = await fetchAll(ctx.router.client, ctx.router.options.configHost, 'config', { find: 'sampledQueries', filter: { ns: request.ns, collectionUuid: target.uuid } });
  const diffs = await sampledDiffs(ctx, request, target);
  const reads = new ReadDistribution(table);
  const writes = new WriteDistribution(table);
  for (const sample of samples) {
    const cmdName = String(sample.cmdName);
    const sampled = isPlainObject(sample.cmd) ? sample.cmd : {};
    if (READ_COMMANDS.has(cmdName)) reads.add(cmdName, sampled);
    else writes.add(cmdName, sampled, sample._id instanceof Binary ? diffs.get(sample._id.toString('hex')) : undefined);
  }
  return { readDistribution: reads.metrics(), writeDistribution: writes.metrics() };
}

// The diffs the shards recorded for the sampled writes of the collection, by sample id: every
// shard's, since a write may have reached any of them.
async function sampledDiffs(ctx: RouterContext, request: AnalyzeShardKeyRequest, target: AnalyzedCollection): Promise<Map<string, Doc>> {
  const shards = await ctx.router.shardRegistry.all();
  const perShard = await Promise.all(shards.map((shard) => fetchAll(ctx.router.client, shard.host, 'config', {
    find: 'sampledQueriesDiff', filter: { ns: request.ns, collectionUuid: target.uuid },
  })));
  const diffs = new Map<string, Doc>();
  for (const doc of perShard.flat()) if (doc._id instanceof Binary && isPlainObject(doc.diff)) diffs.set(doc._id.toString('hex'), doc.diff);
  return diffs;
}
