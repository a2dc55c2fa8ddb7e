import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';
import { removeDir, spawnNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { spawnReplicaSet, until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// replSetReconfig on a real three-member set, as mongosh's rs.add and rs.remove send it
// (replSetGetConfig's config, version + 1, a member pushed or spliced out): a fourth docshard
// started with the same --replSet joins under a steady insert load, completes initial sync,
// becomes SECONDARY and serves a secondary read of every acknowledged document; removed, it is
// REMOVED. Invalid configs get MongoDB's errors and leave replSetGetConfig as it was; a forced
// config from a secondary reaches the primary.
describe('replSetReconfig', () => {
  let set: SpawnedReplicaSet;
  const extra: SpawnedNode[] = [];
  const clients: MongoClient[] = [];
  const connect = (uri: string): MongoClient => {
    const c = new MongoClient(uri, { serverSelectionTimeoutMS: 30_000 });
    clients.push(c);
    return c;
  };

  before(async () => {
    set = await spawnReplicaSet({ electionTimeoutMillis: 5000 });
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const n of extra) await n.stop();
    await set.stop();
    for (const n of [...set.nodes, ...extra]) removeDir(n.dbpath);
  });

  const admin = (): ReturnType<MongoClient['db']> => connect(set.uri).db('admin');
  const getConfig = async (): Promise<AnyDoc> => (await admin().command({ replSetGetConfig: 1 })).config as AnyDoc;

  it('adds a member under load (initial sync, SECONDARY, a secondary read sees every acknowledged insert), then removes it', { timeout: 240_000 }, async () => {
    const node = await spawnNode({ extraArgs: ['--replSet', set.name] });
    extra.push(node);
    const host = `127.0.0.1:${node.port}`;
    const coll = connect(set.uri).db('app').collection<{ _id: number; at: Date }>('load');
    const acked: number[] = [];
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading; i++) {
        await coll.insertOne({ _id: i, at: new Date() }, { writeConcern: { w: 'majority' } });
        acked.push(i);
      }
    })();
    await until('some acknowledged inserts', async () => (acked.length >= 50 ? true : undefined));

    const config = await getConfig();
    config.version = Number(config.version) + 1;
    (config.members as AnyDoc[]).push({ _id: Math.max(...(config.members as AnyDoc[]).map((m) => Number(m._id))) + 1, host });
    await admin().command({ replSetReconfig: config });

    const direct = connect(`mongodb://${host}/?directConnection=true&readPreference=secondary`);
    await until('the new member SECONDARY', async () => {
      const status = await direct.db('admin').command({ replSetGetStatus: 1 });
      return status.myState === 2 ? true : undefined;
    }, 120_000);
    const countAtSync = acked.length;
    await until('more inserts after the new member is SECONDARY', async () => (acked.length >= countAtSync + 50 ? true : undefined));
    loading = false;
    await load;
    const onNew = direct.db('app').collection<{ _id: number }>('load');
    const seen = await until('every acknowledged insert on the new member', async () => {
      const ids = new Set((await onNew.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
      return acked.every((id) => ids.has(id)) ? ids : undefined;
    }, 60_000);
    assert.equal(seen.size, acked.length);
    const hello = await direct.db('admin').command({ hello: 1 });
    assert.equal(hello.secondary, true);
    assert.equal(hello.setVersion, config.version);
    assert.ok((hello.hosts as string[]).includes(host));

    const removal = await getConfig();
    assert.equal((removal.members as AnyDoc[]).length, 4);
    removal.version = Number(removal.version) + 1;
    removal.members = (removal.members as AnyDoc[]).filter((m) => m.host !== host);
    await admin().command({ replSetReconfig: removal });
    assert.deepEqual(((await getConfig()).members as AnyDoc[]).map((m) => m.host), set.hosts);
    await until('the removed member REMOVED', async () => {
      const reply = await direct.db('admin').command({ replSetGetStatus: 1 }).catch((err: unknown) => err);
      return reply instanceof MongoServerError && reply.code === 93 ? true : undefined;
    }, 60_000);
    const helloRemoved = await direct.db('admin').command({ hello: 1 });
    assert.equal(helloRemoved.isWritablePrimary, false);
    assert.equal(helloRemoved.secondary, false);
    await coll.insertOne({ _id: -1, at: new Date() }, { writeConcern: { w: 'majority', wtimeout: 20_000 } });
  });

  it('refuses invalid configs with MongoDB\'s errors and changes nothing', { timeout: 180_000 }, async () => {
    const before = await getConfig();
    const next = (change: (c: AnyDoc) => void): AnyDoc => {
      const c: AnyDoc = { ...before, members: (before.members as AnyDoc[]).map((m) => ({ ...m })) };
      c.version = Number(before.version) + 1;
      change(c);
      return c;
    };
    const refused = async (config: AnyDoc, code: number, on = admin()): Promise<void> => {
      await assert.rejects(on.command({ replSetReconfig: config }), (err: unknown) => {
        assert.ok(err instanceof MongoServerError, String(err));
        assert.equal(err.code, code, err.message);
        return true;
      });
      const after = await getConfig();
      assert.equal(after.version, before.version);
      assert.deepEqual((after.members as AnyDoc[]).map((m) => m.host), (before.members as AnyDoc[]).map((m) => m.host));
    };
    const members = (c: AnyDoc): AnyDoc[] => c.members as AnyDoc[];
    await refused(next((c) => { members(c)[1]!.host = members(c)[0]!.host; }), 93);
    await refused(next((c) => { c.unknownField = 1; }), 40415);
    await refused(next((c) => { for (const m of members(c)) Object.assign(m, { votes: 0, priority: 0 }); }), 93);
    await refused(next((c) => { members(c).push({ _id: 10, host: '127.0.0.1:1' }, { _id: 11, host: '127.0.0.1:2' }); }), 93);
    await refused(next((c) => { c.version = before.version; }), 103);
    await refused(next((c) => { members(c)[2]!._id = 20; }), 103);
    const hello = await admin().command({ hello: 1 });
    const primary = hello.primary as string;
    await refused(next((c) => { c.members = members(c).filter((m) => m.host !== primary); }), 74);
    const secondary = set.hosts.find((h) => h !== primary)!;
    await refused(next(() => undefined), 10107, connect(`mongodb://${secondary}/?directConnection=true`).db('admin'));

    // A member that is not up: with one secondary stopped, a fourth voter on a port nothing
    // listens on leaves two of four voters answering.
    const stopped = set.nodes[set.hosts.indexOf(secondary)]!;
    stopped.child.kill('SIGSTOP');
    try {
      await refused(next((c) => { members(c).push({ _id: 10, host: '127.0.0.1:1' }); }), 74);
    } finally {
      stopped.child.kill('SIGCONT');
    }

    // force, from a secondary: the version raised by a large amount, the term unset, and the
    // primary takes the config from that member's heartbeats.
    await connect(`mongodb://${secondary}/?directConnection=true`).db('admin').command({ replSetReconfig: next(() => undefined), force: true });
    const forced = await until('the forced config on the primary', async () => {
      const c = await getConfig();
      return Number(c.version) > Number(before.version) ? c : undefined;
    }, 30_000);
    assert.ok(Number(forced.version) >= Number(before.version) + 10_000, `version ${forced.version}`);
    assert.equal(Number(forced.term), -1);
    assert.equal((await admin().command({ hello: 1 })).primary, primary, 'the primary stays primary');
  });
});
