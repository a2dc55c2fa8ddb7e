import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient, MongoServerError } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import { withNode, withProcesses } from '../helpers/fixtures.js';

// With --auth, on a node and through a router, with the official driver: a cursor belongs to the
// user who opened it (another user's getMore and killCursors answer Unauthorized with MongoDB's
// messages; clusterAdmin and root may kill it), and listDatabases answers a user without the
// listDatabases action only the databases it may use, as MongoDB's authorizedDatabases does.

function userUri(port: number, user: string, pwd: string, extra = ''): string {
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@127.0.0.1:${port}/?authSource=admin${extra}`;
}

async function refusal(run: () => Promise<unknown>): Promise<MongoServerError> {
  const err = await run().then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
  return err;
}

// `shards`: the ports of shards root adds first, through a router.
interface Target { port: number; extra: string; shards?: number[] }

function checks(target: () => Target): void {
  const clients: Record<string, MongoClient> = {};
  before(async () => {
    const { port, extra } = target();
    const local = await MongoClient.connect(`mongodb://127.0.0.1:${port}/${extra.replace('&', '?')}`);
    await local.db('admin').command({ createUser: 'root', pwd: 'pw', roles: ['root'] });
    await local.close();
    clients.root = await MongoClient.connect(userUri(port, 'root', 'pw', extra));
    const admin = clients.root.db('admin');
    for (const [i, shard] of (target().shards ?? []).entries()) await admin.command({ addShard: `127.0.0.1:${shard}`, name: `shard${i}` });
    await admin.command({ createUser: 'alice', pwd: 'pw', roles: [{ role: 'readWrite', db: 'a' }] });
    await admin.command({ createUser: 'bob', pwd: 'pw', roles: [{ role: 'readWrite', db: 'a' }, { role: 'read', db: 'b' }] });
    await admin.command({ createUser: 'ops', pwd: 'pw', roles: ['clusterAdmin'] });
    for (const db of ['a', 'b', 'c']) await clients.root.db(db).collection('c').insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: i })) as never[]);
    for (const user of ['alice', 'bob', 'ops']) clients[user] = await MongoClient.connect(userUri(port, user, 'pw', extra));
  });
  after(async () => {
    for (const client of Object.values(clients)) await client.close();
  });

  const openCursor = async (client: MongoClient): Promise<Long> => {
    const reply = await client.db('a').command({ find: 'c', batchSize: 2 }, { promoteLongs: false });
    assert.equal(reply.cursor.firstBatch.length, 2);
    return reply.cursor.id as Long;
  };

  it("another user's getMore and killCursors are refused with 13; the owner reads on", async () => {
    const id = await openCursor(clients.alice!);
    const getMore = await refusal(() => clients.bob!.db('a').command({ getMore: id, collection: 'c' }));
    assert.equal(getMore.code, 13);
    assert.equal(getMore.errmsg, `cursor id ${id.toString()} was not created by the authenticated user`);
    const kill = await refusal(() => clients.bob!.db('a').command({ killCursors: 'c', cursors: [id] }));
    assert.equal(kill.code, 13);
    assert.equal(kill.errmsg, 'not authorized to kill cursor on a.c');
    const more = await clients.alice!.db('a').command({ getMore: id, collection: 'c', batchSize: 2 });
    assert.deepEqual(more.cursor.nextBatch, [{ _id: 2 }, { _id: 3 }]);
    const killed = await clients.alice!.db('a').command({ killCursors: 'c', cursors: [id] });
    assert.deepEqual(killed.cursorsKilled, [id]);
  });

  it("clusterAdmin and root kill another user's cursor", async () => {
    for (const killer of ['ops', 'root']) {
      const id = await openCursor(clients.alice!);
      const killed = await clients[killer]!.db('a').command({ killCursors: 'c', cursors: [id] });
      assert.deepEqual(killed.cursorsKilled, [id], killer);
    }
  });

  it('listDatabases answers a user its own databases, all to one that may list them', async () => {
    const names = async (client: MongoClient, cmd: object = {}): Promise<string[]> => ((await client.db('admin').command({ listDatabases: 1, ...cmd })).databases as { name: string }[]).map((d) => d.name).sort();
    assert.deepEqual(await names(clients.alice!), ['a']);
    assert.deepEqual(await names(clients.bob!, { nameOnly: true }), ['a', 'b']);
    assert.deepEqual(await names(clients.bob!, { authorizedDatabases: true }), ['a', 'b']);
    const all = await names(clients.root!);
    assert.ok(['a', 'b', 'c'].every((db) => all.includes(db)), all.join());
    assert.deepEqual(await names(clients.ops!), all);
    const err = await refusal(() => clients.alice!.db('admin').command({ listDatabases: 1, authorizedDatabases: false }));
    assert.equal(err.code, 13);
    // The driver's listDatabases helper, as `show dbs` runs it.
    assert.deepEqual((await clients.bob!.db('admin').admin().listDatabases()).databases.map((d) => d.name).sort(), ['a', 'b']);
  });
}

describe('cursors and databases of users on a node with --auth', () => {
  let node: SpawnedNode;
  withNode({ extraArgs: ['--auth'] }, async (f) => {
    node = f.node;
  });
  checks(() => ({ port: node.port, extra: '&directConnection=true' }));
});

describe('cursors and databases of users through a router with --auth', () => {
  let config: SpawnedNode;
  let shards: SpawnedNode[];
  let router: SpawnedRouter;
  withProcesses(async (p) => {
    config = await p.node({ role: 'config' });
    shards = await Promise.all([p.node({ role: 'shard' }), p.node({ role: 'shard' })]);
    router = await p.router(config.port, ['--auth']);
  });
  checks(() => ({ port: router.port, extra: '', shards: shards.map((s) => s.port) }));
});
