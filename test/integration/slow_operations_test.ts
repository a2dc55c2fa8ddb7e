import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// MongoDB's slow operation log and the profile command that sets it (src/metrics/slow_operations.ts,
// src/mongod_commands/diagnostic/profile.ts), on a node and through a router: a request over slowms is
// logged as "Slow query" with its namespace, command and duration, a password never. And the
// logLevel parameter, set at runtime (src/command_layer/log_level.ts).
describe('the slow operation log, the profile command and logLevel', () => {
  let node: SpawnedNode;
  let cluster: SpawnedCluster;
  const clients: Record<'node' | 'router', MongoClient> = {} as never;

  withProcesses(async (p) => {
    [node, cluster] = await Promise.all([p.node(), p.cluster({ shards: 1 })]);
    clients.node = p.connect(node.uri);
    clients.router = p.connect(cluster.routers[0]!.uri);
  });

  async function slowLines(db: Db): Promise<AnyDoc[]> {
    const { log } = await db.admin().command({ getLog: 'global' });
    return (log as string[]).map((line) => JSON.parse(line) as AnyDoc).filter((l) => l.msg === 'Slow query');
  }

  for (const target of ['node', 'router'] as const) {
    it(`on a ${target}: profile -1 reads the settings, 0 sets them, and every request over slowms is logged`, async () => {
      const db = clients[target].db('slowdb');
      const { ok, was, slowms, sampleRate } = await db.command({ profile: -1 });
      assert.deepEqual({ ok, was, slowms, sampleRate }, { ok: 1, was: 0, slowms: 100, sampleRate: 1 });
      const set = await db.command({ profile: 0, slowms: 0 });
      assert.deepEqual([set.was, set.slowms, set.sampleRate], [0, 100, 1], 'the reply holds the settings as they were');
      assert.equal((await db.command({ profile: -1 })).slowms, 0);
      try {
        await db.collection<AnyDoc>('c').insertOne({ _id: 1 });
        await db.collection<AnyDoc>('c').find({ _id: 1 }, { comment: `slow-${target}` }).toArray();
        await db.command({ createUser: `u${target}`, pwd: 'secret-password', roles: [] });
        const lines = await slowLines(db);
        const find = lines.find((l) => l.command?.comment === `slow-${target}`);
        assert.ok(find, `a "Slow query" line for the find: ${JSON.stringify(lines.slice(-3))}`);
        assert.deepEqual([find.c, find.id, find.ns, find.command.find, find.ok, typeof find.durationMillis], ['COMMAND', 51803, 'slowdb.c', 'c', 1, 'number']);
        const created = lines.find((l) => l.command?.createUser === `u${target}`);
        assert.equal(created?.command.pwd, 'xxx', 'the password is left out');
        const { log } = await db.admin().command({ getLog: 'global' });
        assert.ok(!(log as string[]).some((line) => line.includes('secret-password')), 'nowhere in the log');
      } finally {
        await db.command({ profile: 0, slowms: 100 });
      }
      await db.command({ profile: 0, slowms: 100_000 });
      try {
        await db.collection<AnyDoc>('c').find({ _id: 1 }, { comment: `fast-${target}` }).toArray();
        assert.ok(!(await slowLines(db)).some((l) => l.command?.comment === `fast-${target}`), 'nothing under slowms is logged');
      } finally {
        await db.command({ profile: 0, slowms: 100 });
      }
    });

    it(`on a ${target}: setParameter logLevel 1 logs the debug lines until it is 0 again; other parameters are refused`, async () => {
      const admin = clients[target].db('admin');
      const debugLines = async (): Promise<number> => ((await admin.command({ getLog: 'global' })).log as string[]).filter((l) => JSON.parse(l).level === 20).length;
      assert.equal((await admin.command({ getParameter: 1, logLevel: 1 })).logLevel, 0);
      const before = await debugLines();
      assert.deepEqual([(await admin.command({ setParameter: 1, logLevel: 1 })).was], [0]);
      try {
        assert.equal((await admin.command({ getParameter: 1, logLevel: 1 })).logLevel, 1);
        await clients[target].db('slowdb').collection<AnyDoc>('c').find({}).toArray();
        await admin.command({ ping: 1 });
        assert.ok(await debugLines() > before, 'debug lines are logged');
      } finally {
        assert.equal((await admin.command({ setParameter: 1, logLevel: 0 })).was, 1);
      }
      const refusal = (cmd: AnyDoc): Promise<string | undefined> => admin.command(cmd).then(() => undefined, (err: AnyDoc) => err.codeName as string);
      assert.equal(await refusal({ setParameter: 1, logLevel: 9 }), 'BadValue');
      assert.equal(await refusal({ setParameter: 1, noSuchParameter: 1 }), 'InvalidOptions');
      assert.equal(await refusal({ setParameter: 1 }), 'InvalidOptions');
      assert.equal(await refusal({ setParameter: 1, featureCompatibilityVersion: '7.0' }), 'IllegalOperation');
    });

    it(`on a ${target}: profile refuses the profiler's levels, a bad sampleRate and a filter`, async () => {
      const db = clients[target].db('slowdb');
      const refusal = (cmd: AnyDoc): Promise<string | undefined> => db.command(cmd).then(() => undefined, (err: AnyDoc) => err.codeName as string);
      assert.equal(await refusal({ profile: 1 }), target === 'node' ? 'NotImplemented' : 'BadValue');
      assert.equal(await refusal({ profile: 0, sampleRate: 2 }), 'BadValue');
      assert.equal(await refusal({ profile: 0, filter: { millis: { $gt: 1 } } }), 'NotImplemented');
      assert.equal(await refusal({ profile: 'all' }), 'TypeMismatch');
      assert.equal((await db.command({ profile: -1 })).slowms, 100, 'a refusal changed nothing');
    });
  }
});
