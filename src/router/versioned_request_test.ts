import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID, MaxKey } from 'bson';
import { pino } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { Binary, MinKey, ObjectId, Timestamp, type Doc } from '../bson/values.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { compileFilter } from '../query/match/matcher.js';
import { WireClient } from '../wire/client.js';
import { CatalogCache } from './catalog_cache.js';
import type { RouterServices } from './router_services.js';
import { ShardRegistry } from './shard_registry.js';
import { MAX_STALE_RETRIES, sendToShard, throwIfStale, versionFields, withStaleRetry, type Routing } from './versioned_request.js';

const CONFIG = 'config.test:1';
const NS = 'db.c';

// One client for the config server (in-memory collections answered with the project's filter
// matcher) and the shards (each answering what the test's `shard` handler says). Every command
// is logged in order, so a test can read how shard requests and config reads interleave.
class FakeCluster extends WireClient {
  readonly collections = new Map<string, Doc[]>();
  readonly log: { to: string; cmd: Doc }[] = [];
  shard: (shardId: string, cmd: Doc) => Doc = () => ({ ok: 1 });

  override async command(host: string, db: string, cmd: Doc): Promise<Doc> {
    if (host !== CONFIG) {
      const id = String(this.get('config.shards').find((s) => s.host === host)?._id);
      this.log.push({ to: id, cmd });
      return this.shard(id, cmd);
    }
    this.log.push({ to: `config.${String(cmd.find)}`, cmd });
    assert.equal(typeof cmd.find, 'string', 'the router only reads the config server here');
    const ns = `${db}.${String(cmd.find)}`;
    const matcher = compileFilter((cmd.filter ?? {}) as Doc);
    return { cursor: { id: 0, ns, firstBatch: this.get(ns).filter((d) => matcher.matches(d)) }, ok: 1 };
  }

  get(ns: string): Doc[] {
    return this.collections.get(ns) ?? [];
  }

  put(ns: string, docs: Doc[]): void {
    this.collections.set(ns, docs);
  }

  shardRequests(): { to: string; cmd: Doc }[] {
    return this.log.filter((e) => !e.to.startsWith('config.'));
  }
}

const epoch = new ObjectId();
const timestamp = new Timestamp({ t: 100, i: 1 });
const uuid: Binary = new UUID();
const dbUuid: Binary = new UUID();

function chunk(min: unknown, max: unknown, shard: string, major: number, minor: number): Doc {
  return { _id: new ObjectId(), uuid, min: { k: min }, max: { k: max }, shard, lastmod: new Timestamp({ t: major, i: minor }), onCurrentShardSince: timestamp, history: [] } satisfies ChunkType;
}

function database(primary: string, lastMod: number): Doc {
  return { _id: 'db', primary, version: { uuid: dbUuid, timestamp, lastMod } };
}

// A shard's StaleConfig reply as shard_version_check builds it (MongoDB's StaleConfigInfo).
function staleConfig(shardId: string, cmd: Doc, wantedMajor: number): Doc {
  return {
    ok: 0, errmsg: `version mismatch detected for ${NS}`, code: ErrorCodes.StaleConfig, codeName: 'StaleConfig',
    ns: NS, vReceived: cmd.shardVersion, vWanted: { e: epoch, t: timestamp, v: new Timestamp({ t: wantedMajor, i: 0 }) }, shardId,
  };
}

const found = { cursor: { id: 0, ns: NS, firstBatch: [{ _id: 1, k: 5 }] }, ok: 1 };

// What a routed find does on each try: target the owning shard with its version, and throw a
// stale answer so withStaleRetry sees it.
function findK5(router: RouterServices) {
  return (routing: Routing): Promise<Doc> => {
    const shardId = routing.cm ? routing.cm.findIntersectingChunk({ k: 5 }).shard : routing.db.primary;
    return sendToShard(router, shardId, 'db', { find: 'c', filter: { k: 5 }, ...versionFields(routing, shardId) }).then(throwIfStale);
  };
}

describe('withStaleRetry', () => {
  let cluster: FakeCluster;
  let router: RouterServices;

  // db.c sharded on {k: 1}: [MinKey, 0) on s0 at 1|0, [0, MaxKey) on s1 at 1|1.
  beforeEach(() => {
    cluster = new FakeCluster();
    cluster.put('config.shards', [{ _id: 's0', host: 'sh0:1' }, { _id: 's1', host: 'sh1:1' }]);
    cluster.put('config.databases', [database('s0', 1)]);
    cluster.put('config.collections', [{ _id: NS, lastmodEpoch: epoch, lastmod: new Date(0), timestamp, uuid, key: { k: 1 }, unique: false } satisfies CollectionType]);
    cluster.put('config.chunks', [chunk(new MinKey(), 0, 's0', 1, 0), chunk(0, new MaxKey(), 's1', 1, 1)]);
    const services: Pick<RouterServices, 'client' | 'catalogCache' | 'shardRegistry' | 'logger'> = {
      client: cluster,
      catalogCache: new CatalogCache(cluster, CONFIG),
      shardRegistry: new ShardRegistry(cluster, CONFIG),
      logger: pino({ level: 'silent' }),
    };
    router = services as RouterServices;
  });

  async function warm(): Promise<void> {
    await router.catalogCache.requireDatabase('db', false);
    await router.catalogCache.getCollection(NS);
    await router.shardRegistry.all();
    cluster.log.length = 0;
  }

  for (const cached of [true, false]) {
    test(`a shard that keeps answering StaleConfig gets 1 + ${MAX_STALE_RETRIES} tries, a refresh before each retry, then the caller gets its StaleConfig (routing ${cached ? 'cached' : 'not yet loaded'})`, async () => {
      assert.equal(MAX_STALE_RETRIES, 10, "mongos's kMaxNumStaleVersionRetries");
      if (cached) await warm();
      cluster.shard = (shardId, cmd) => staleConfig(shardId, cmd, 9);

      await assert.rejects(withStaleRetry(router, NS, findK5(router)), (err: unknown) => {
        assert.ok(err instanceof MongoError);
        assert.equal(err.code, ErrorCodes.StaleConfig);
        assert.equal(err.extra.ns, NS);
        assert.equal(err.extra.shardId, 's1');
        return true;
      });
      // mongos: a failed try is retried while ++numAttempts <= kMaxNumStaleVersionRetries.
      assert.equal(cluster.shardRequests().length, MAX_STALE_RETRIES + 1);
      // Every try but a cached first one follows a read of the collection's routing.
      const order = cluster.log.filter((e) => e.to === 'config.collections' || e.to === 's1').map((e) => e.to);
      const expected = Array.from({ length: MAX_STALE_RETRIES + 1 }, () => ['config.collections', 's1']).flat();
      assert.deepEqual(order, cached ? expected.slice(1) : expected);
    });
  }

  test('one StaleConfig answer is retried transparently on the refreshed routing table', async () => {
    await warm();
    // A migration the router has not seen: [MinKey, 0) moved to s1 at 2|0, [0, MaxKey) bumped to 2|1.
    cluster.put('config.chunks', [chunk(new MinKey(), 0, 's1', 2, 0), chunk(0, new MaxKey(), 's1', 2, 1)]);
    cluster.shard = (shardId, cmd) => {
      const received = (cmd.shardVersion as Doc).v as Timestamp;
      return received.t < 2 ? staleConfig(shardId, cmd, 2) : found;
    };

    assert.deepEqual(await withStaleRetry(router, NS, findK5(router)), found);
    const tries = cluster.shardRequests();
    assert.equal(tries.length, 2);
    assert.deepEqual((tries[0]!.cmd.shardVersion as Doc).v, new Timestamp({ t: 1, i: 1 }));
    assert.deepEqual((tries[1]!.cmd.shardVersion as Doc).v, new Timestamp({ t: 2, i: 1 }));
    assert.deepEqual(cluster.log.map((e) => e.to), ['s1', 'config.collections', 'config.chunks', 's1']);
  });

  test('StaleDbVersion forgets the database entry too: the retry goes to the new primary with its new version', async () => {
    cluster.put('config.collections', []);
    await warm();
    // movePrimary to s1, which the router has not seen: the old primary answers StaleDbVersion.
    cluster.put('config.databases', [database('s1', 2)]);
    cluster.shard = (shardId, cmd) => {
      if (shardId === 's1') return found;
      return {
        ok: 0, errmsg: 'version mismatch detected for database db', code: ErrorCodes.StaleDbVersion, codeName: 'StaleDbVersion',
        db: 'db', vReceived: cmd.databaseVersion,
      };
    };

    assert.deepEqual(await withStaleRetry(router, NS, findK5(router)), found);
    const tries = cluster.shardRequests();
    assert.deepEqual(tries.map((t) => t.to), ['s0', 's1']);
    assert.equal((tries[1]!.cmd.databaseVersion as Doc).lastMod, 2);
  });

  test('an error that is not about routing is not retried', async () => {
    await warm();
    cluster.shard = () => ({ ok: 0, errmsg: 'bad filter', code: ErrorCodes.BadValue, codeName: 'BadValue' });
    const attempt = (routing: Routing) => findK5(router)(routing).then((reply) => {
      if (reply.ok === 0) throw new MongoError(reply.code as number, String(reply.errmsg));
      return reply;
    });
    await assert.rejects(withStaleRetry(router, NS, attempt), (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.BadValue);
    assert.equal(cluster.shardRequests().length, 1);
  });
});
