import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID, MaxKey } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { Binary, MinKey, ObjectId, Timestamp, type Doc } from '../bson/values.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { compileFilter } from '../query/match/matcher.js';
import { WireClient } from '../wire/client.js';
import { CatalogCache } from './catalog_cache.js';

const CONFIG = 'config.test:1';
const NS = 'db.c';

// The config server as in-memory collections. `find` is answered with the project's own filter
// matcher, so what a query selects is what a real config server would select; every command is
// recorded for the test to read. `afterFind` runs once a reply is computed (a commit landing
// between two reads).
class FakeConfigServer extends WireClient {
  readonly collections = new Map<string, Doc[]>();
  readonly sent: { host: string; db: string; cmd: Doc }[] = [];
  afterFind: ((cmd: Doc) => void) | undefined;

  override async command(host: string, db: string, cmd: Doc): Promise<Doc> {
    this.sent.push({ host, db, cmd });
    if (typeof cmd.find === 'string') {
      const ns = `${db}.${cmd.find}`;
      const matcher = compileFilter((cmd.filter ?? {}) as Doc);
      const firstBatch = (this.collections.get(ns) ?? []).filter((d) => matcher.matches(d));
      this.afterFind?.(cmd);
      return { cursor: { id: 0, ns, firstBatch }, ok: 1 };
    }
    if (typeof cmd._configsvrCreateDatabase === 'string') {
      this.put('config.databases', [...this.get('config.databases'), database(cmd._configsvrCreateDatabase, 's0', 1)]);
      return { ok: 1 };
    }
    throw new Error(`the fake config server does not answer ${JSON.stringify(cmd)}`);
  }

  get(ns: string): Doc[] {
    return this.collections.get(ns) ?? [];
  }

  put(ns: string, docs: Doc[]): void {
    this.collections.set(ns, docs);
  }

  // The filters of the config.chunks queries sent since `from`.
  chunkQueries(from = 0): Doc[] {
    return this.sent.slice(from).filter((s) => s.cmd.find === 'chunks').map((s) => s.cmd.filter as Doc);
  }
}

interface Generation {
  uuid: Binary;
  epoch: ObjectId;
  timestamp: Timestamp;
}

function newGeneration(t: number): Generation {
  return { uuid: new UUID(), epoch: new ObjectId(), timestamp: new Timestamp({ t, i: 1 }) };
}

function collection(g: Generation): Doc {
  return { _id: NS, lastmodEpoch: g.epoch, lastmod: new Date(0), timestamp: g.timestamp, uuid: g.uuid, key: { k: 1 }, unique: false } satisfies CollectionType;
}

function chunk(g: Generation, min: unknown, max: unknown, shard: string, major: number, minor: number): Doc {
  return {
    _id: new ObjectId(), uuid: g.uuid, min: { k: min }, max: { k: max }, shard,
    lastmod: new Timestamp({ t: major, i: minor }), onCurrentShardSince: g.timestamp, history: [{ validAfter: g.timestamp, shard }],
  } satisfies ChunkType;
}

function database(name: string, primary: string, lastMod: number): Doc {
  return { _id: name, primary, version: { uuid: new UUID(), timestamp: new Timestamp({ t: 50, i: 1 }), lastMod } };
}

const v = (major: number, minor: number) => new Timestamp({ t: major, i: minor });

describe('CatalogCache', () => {
  let config: FakeConfigServer;
  let cache: CatalogCache;
  let g: Generation;

  // db.c sharded on {k: 1}: [MinKey, 0) on s0 at 1|0, [0, MaxKey) on s1 at 1|1.
  beforeEach(() => {
    config = new FakeConfigServer();
    cache = new CatalogCache(config, CONFIG);
    g = newGeneration(100);
    config.put('config.databases', [database('db', 's0', 1)]);
    config.put('config.collections', [collection(g)]);
    config.put('config.chunks', [chunk(g, new MinKey(), 0, 's0', 1, 0), chunk(g, 0, new MaxKey(), 's1', 1, 1)]);
  });

  test('a first load reads every chunk of the collection, by its uuid, and later look-ups are served from the cache', async () => {
    const cm = await cache.getCollection(NS);
    assert.deepEqual(config.chunkQueries(), [{ uuid: g.uuid }]);
    assert.equal(cm?.numChunks, 2);
    const sent = config.sent.length;
    assert.equal(await cache.getCollection(NS), cm);
    assert.equal(config.sent.length, sent, 'a fresh entry costs no round trip');
  });

  test('a refresh in the same generation asks only for chunks with lastmod >= the cached collection version and applies the split they describe', async () => {
    const before = await cache.getCollection(NS);
    assert.equal(before!.collectionVersion().major, 1);
    // The config server commits a split of [0, MaxKey) at 10 (minor bumps from 1|1).
    config.put('config.chunks', [
      chunk(g, new MinKey(), 0, 's0', 1, 0), chunk(g, 0, 10, 's1', 1, 2), chunk(g, 10, new MaxKey(), 's1', 1, 3),
    ]);
    const from = config.sent.length;
    cache.invalidateCollection(NS);
    const after = await cache.getCollection(NS);

    // MongoDB's diff query is {lastmod: {$gte: <collection version>}} (createShardChunkDiffQuery).
    assert.deepEqual(config.chunkQueries(from), [{ uuid: g.uuid, lastmod: { $gte: v(1, 1) } }]);
    assert.notEqual(after, before);
    assert.equal(after!.numChunks, 3);
    assert.deepEqual(after!.findIntersectingChunk({ k: 5 }).max, { k: 10 });
    assert.deepEqual(after!.findIntersectingChunk({ k: 10 }).min, { k: 10 });
    assert.equal(after!.findIntersectingChunk({ k: -1 }).shard, 's0', 'the chunk the diff did not carry is kept');
    const cv = after!.collectionVersion();
    assert.deepEqual([cv.major, cv.minor], [1, 3]);
    assert.ok(cv.epoch.equals(g.epoch));
    const s1 = after!.shardVersion('s1');
    assert.deepEqual([s1.major, s1.minor], [1, 3]);
  });

  test('a dropped and re-sharded collection (new uuid, epoch and timestamp) is reloaded in full', async () => {
    await cache.getCollection(NS);
    const next = newGeneration(200);
    config.put('config.collections', [collection(next)]);
    // The new generation starts again at 1|0, below the cached 1|1: a diff would find nothing.
    config.put('config.chunks', [chunk(next, new MinKey(), new MaxKey(), 's1', 1, 0)]);
    const from = config.sent.length;
    cache.invalidateCollection(NS);
    const cm = await cache.getCollection(NS);

    assert.deepEqual(config.chunkQueries(from), [{ uuid: next.uuid }]);
    assert.ok(cm!.epoch.equals(next.epoch));
    assert.ok(cm!.timestamp.equals(next.timestamp));
    assert.equal(cm!.numChunks, 1);
    assert.equal(cm!.findIntersectingChunk({ k: -1 }).shard, 's1');
  });

  test('a generation that differs only in its timestamp is a generation change too', async () => {
    await cache.getCollection(NS);
    const next = { ...g, timestamp: new Timestamp({ t: 300, i: 1 }) };
    config.put('config.collections', [collection(next)]);
    config.put('config.chunks', [chunk(next, new MinKey(), new MaxKey(), 's0', 1, 0)]);
    const from = config.sent.length;
    cache.invalidateCollection(NS);
    const cm = await cache.getCollection(NS);

    assert.deepEqual(config.chunkQueries(from), [{ uuid: g.uuid }]);
    assert.ok(cm!.timestamp.equals(next.timestamp));
    assert.equal(cm!.numChunks, 1);
  });

  test('a diff that does not fit the cached table (read in the middle of a commit) falls back to a full load', async () => {
    await cache.getCollection(NS);
    // The diff sees the first half of a split of [0, MaxKey) only; the commit completes right after.
    config.put('config.chunks', [chunk(g, new MinKey(), 0, 's0', 1, 0), chunk(g, 0, 10, 's1', 1, 2)]);
    config.afterFind = (cmd) => {
      if (cmd.find !== 'chunks') return;
      config.afterFind = undefined;
      config.put('config.chunks', [...config.get('config.chunks'), chunk(g, 10, new MaxKey(), 's1', 1, 3)]);
    };
    const from = config.sent.length;
    cache.invalidateCollection(NS);
    const cm = await cache.getCollection(NS);

    assert.deepEqual(config.chunkQueries(from), [{ uuid: g.uuid, lastmod: { $gte: v(1, 1) } }, { uuid: g.uuid }]);
    assert.equal(cm!.numChunks, 3);
    assert.deepEqual(cm!.findIntersectingChunk({ k: 50 }).min, { k: 10 });
  });

  test('callers asking for a stale collection at the same time share one load', async () => {
    const first = await cache.getCollection(NS);
    cache.invalidateCollection(NS);
    const from = config.sent.length;
    const answers = await Promise.all([cache.getCollection(NS), cache.getCollection(NS), cache.getCollection(NS)]);
    assert.equal(config.sent.slice(from).filter((s) => s.cmd.find === 'collections').length, 1);
    assert.equal(config.chunkQueries(from).length, 1);
    assert.ok(answers.every((cm) => cm === answers[0]));
    assert.equal(answers[0]!.numChunks, first!.numChunks);
  });

  test('an invalidation during a load leaves the entry stale, and a caller arriving after it gets the table after the change', async () => {
    await cache.requireDatabase('db', false);
    await cache.getCollection(NS);
    cache.invalidateCollection(NS);
    let late: Promise<unknown> | undefined;
    // The load reads the chunks; a split then commits and a shard's stale answer invalidates the
    // entry before that load has finished.
    config.afterFind = (cmd) => {
      if (cmd.find !== 'chunks') return;
      config.afterFind = undefined;
      config.put('config.chunks', [
        chunk(g, new MinKey(), 0, 's0', 1, 0), chunk(g, 0, 10, 's1', 1, 2), chunk(g, 10, new MaxKey(), 's1', 1, 3),
      ]);
      cache.invalidateCollection(NS);
      late = cache.getCollection(NS);
    };
    const early = await cache.getCollection(NS);
    assert.equal(early!.numChunks, 2, 'the load read the chunks before the split');
    assert.equal(cache.peekRouting(NS), undefined, 'so the entry it filled is still stale');
    const after = (await late) as Awaited<ReturnType<CatalogCache['getCollection']>>;
    assert.equal(after!.numChunks, 3);
    const sent = config.sent.length;
    assert.equal(await cache.getCollection(NS), after);
    assert.equal(config.sent.length, sent, 'the second load filled the entry fresh');
  });

  test('callers asking for an uncached database at the same time share one look-up', async () => {
    const found = await Promise.all([cache.requireDatabase('db', false), cache.requireDatabase('db', false), cache.requireDatabase('db', false)]);
    assert.equal(config.sent.filter((s) => s.cmd.find === 'databases').length, 1);
    assert.ok(found.every((d) => d === found[0]));
  });

  test('a database invalidated while it is being looked up is not cached from that look-up', async () => {
    config.afterFind = (cmd) => {
      if (cmd.find !== 'databases') return;
      config.afterFind = undefined;
      // A movePrimary commits and a shard's StaleDbVersion invalidates the database meanwhile.
      config.put('config.databases', [database('db', 's1', 2)]);
      cache.invalidateDatabase('db');
    };
    assert.equal((await cache.requireDatabase('db', false)).primary, 's0', 'read before the move');
    assert.equal((await cache.requireDatabase('db', false)).primary, 's1');
  });

  test('an unsharded collection is cached as such until invalidated, and one dropped on the config server stops being routed as sharded', async () => {
    config.put('config.collections', []);
    assert.equal(await cache.getCollection(NS), undefined);
    const sent = config.sent.length;
    assert.equal(await cache.getCollection(NS), undefined);
    assert.equal(config.sent.length, sent, 'the unsharded answer is cached');

    config.put('config.collections', [collection(g)]);
    cache.invalidateCollection(NS);
    assert.equal((await cache.getCollection(NS))?.numChunks, 2);

    config.put('config.collections', []);
    config.put('config.chunks', []);
    cache.invalidateCollection(NS);
    assert.equal(await cache.getCollection(NS), undefined);
  });

  test('peekRouting answers only what is cached and fresh, without a round trip', async () => {
    assert.equal(cache.peekRouting(NS), undefined, 'nothing cached');
    await cache.requireDatabase('db', false);
    assert.equal(cache.peekRouting(NS), undefined, 'the database alone');
    const cm = await cache.getCollection(NS);
    const sent = config.sent.length;
    const peeked = cache.peekRouting(NS);
    assert.equal(peeked?.cm, cm);
    assert.equal(peeked?.db._id, 'db');
    cache.invalidateCollection(NS);
    assert.equal(cache.peekRouting(NS), undefined, 'a stale table');
    assert.equal(config.sent.length, sent);
  });

  test('a database is cached, created on the config server on demand, and read again after invalidation', async () => {
    await assert.rejects(cache.requireDatabase('other', false), (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.NamespaceNotFound);
    assert.equal(config.sent.filter((s) => s.cmd._configsvrCreateDatabase !== undefined).length, 0, 'not created without create');

    const created = await cache.requireDatabase('other', true);
    assert.equal(created.primary, 's0');
    assert.deepEqual(config.sent.filter((s) => s.cmd._configsvrCreateDatabase !== undefined).map((s) => [s.host, s.db]), [[CONFIG, 'admin']]);

    const db = await cache.requireDatabase('db', false);
    const sent = config.sent.length;
    assert.equal(await cache.requireDatabase('db', false), db);
    assert.equal(config.sent.length, sent, 'a cached database costs no round trip');

    config.put('config.databases', [database('db', 's1', 2), database('other', 's0', 1)]);
    cache.invalidateDatabase('db');
    const moved = await cache.requireDatabase('db', false);
    assert.equal(moved.primary, 's1');
    assert.equal(moved.version.lastMod, 2);
  });
});
