import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoServerError, type Db } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';
import { airports, employees, people, travelers } from '../../src/query/agg/stage_graph_lookup_cases.js';

// Issue 35: $graphLookup gives the results of the examples of MongoDB's manual, on a node and
// through a router where every collection, the one searched included, is sharded on _id with its
// documents on two shards; bad arguments get MongoDB's errors and the server keeps serving.

const DB = 'graph';

// The examples of MongoDB's $graphLookup manual page, as the stage's own tests use them.
const data: Record<string, AnyDoc[]> = { employees, airports, travelers, people };

function names(docs: unknown): string[] {
  return (docs as AnyDoc[]).map((d) => String(d.name)).sort();
}

const bad = { from: 'employees', startWith: { $literal: 0 }, connectToField: 'a', connectFromField: 'b', as: 'output' };

describe('$graphLookup', () => {
  const targets: [string, Db][] = [];

  withProcesses(async (p) => {
    const [node, cluster] = await Promise.all([p.node(), p.cluster({ shards: 2 })]);
    const direct = p.connect(node.uri).db(DB);
    const routed = p.connect(cluster.routers[0]!.uri);
    const admin = routed.db('admin');
    await admin.command({ enableSharding: DB, primaryShard: 'shard1' });
    for (const [name, docs] of Object.entries(data)) {
      const ns = `${DB}.${name}`;
      await admin.command({ shardCollection: ns, key: { _id: 1 } });
      await admin.command({ split: ns, middle: { _id: 3 } });
      await admin.command({ moveChunk: ns, find: { _id: 0 }, to: 'shard0', _waitForDelete: true });
      await routed.db(DB).collection(name).insertMany(docs);
      await direct.collection(name).insertMany(docs);
    }
    targets.push(['a node', direct], ['a router over a collection sharded on _id', routed.db(DB)]);
  });

  for (const which of [0, 1]) {
    const where = which === 0 ? 'a node' : 'a router';
    it(`on ${where}: the reporting hierarchy of the manual's employees example`, async () => {
      const db = targets[which]![1];
      const out = await db.collection('employees').aggregate([
        { $graphLookup: { from: 'employees', startWith: '$reportsTo', connectFromField: 'reportsTo', connectToField: 'name', as: 'reportingHierarchy' } },
        { $sort: { _id: 1 } },
      ]).toArray();
      assert.deepEqual(Object.fromEntries(out.map((d) => [d.name, names(d.reportingHierarchy)])), {
        Dev: [], Eliot: ['Dev'], Ron: ['Dev', 'Eliot'], Andrew: ['Dev', 'Eliot'], Asya: ['Dev', 'Eliot', 'Ron'], Dan: ['Andrew', 'Dev', 'Eliot'],
      });
      const asya = out.find((d) => d.name === 'Asya')!;
      assert.deepEqual((asya.reportingHierarchy as AnyDoc[]).find((e) => e.name === 'Ron'), { _id: 3, name: 'Ron', reportsTo: 'Eliot' });
    });

    it(`on ${where}: the airports example, with maxDepth and depthField`, async () => {
      const db = targets[which]![1];
      const out = await db.collection('travelers').aggregate([
        { $graphLookup: { from: 'airports', startWith: '$nearestAirport', connectFromField: 'connects', connectToField: 'airport', maxDepth: 2, depthField: 'numConnections', as: 'destinations' } },
        { $sort: { _id: 1 } },
      ], { promoteLongs: false }).toArray();
      const depths = (d: AnyDoc): Record<string, unknown> => Object.fromEntries((d.destinations as AnyDoc[]).map((a) => [a.airport, a.numConnections]));
      const L = (n: number): Long => Long.fromNumber(n);
      assert.deepEqual(out.map(depths), [
        { JFK: L(0), BOS: L(1), ORD: L(1), PWM: L(2) },
        { JFK: L(0), BOS: L(1), ORD: L(1), PWM: L(2) },
        { BOS: L(0), JFK: L(1), PWM: L(1), ORD: L(2), LHR: L(2) },
      ]);
    });

    it(`on ${where}: restrictSearchWithMatch, as the manual's golfers example`, async () => {
      const db = targets[which]![1];
      const out = await db.collection('people').aggregate([
        { $match: { name: 'Tanya Jordan' } },
        { $graphLookup: { from: 'people', startWith: '$friends', connectFromField: 'friends', connectToField: 'name', as: 'golfers', restrictSearchWithMatch: { hobbies: 'golf' } } },
        { $project: { name: 1, friends: 1, 'connections who play golf': '$golfers.name' } },
      ]).toArray();
      assert.equal(out.length, 1);
      assert.deepEqual(out[0]!.friends, people[0]!.friends);
      assert.deepEqual([...(out[0]!['connections who play golf'] as string[])].sort(), ['Angelo Ward', 'Carole Hale', 'Joseph Dennis', 'Tanya Jordan']);
    });

    it(`on ${where}: bad arguments get MongoDB's errors, and the server keeps serving`, async () => {
      const coll = targets[which]![1].collection('employees');
      const refused = async (spec: unknown, code: number): Promise<void> => {
        await assert.rejects(coll.aggregate([{ $graphLookup: spec }]).toArray(), (e: unknown) => {
          assert.ok(e instanceof MongoServerError, String(e));
          assert.equal(e.code, code, e.message);
          return true;
        });
      };
      await refused(4, 9);
      await refused({ ...bad, maxDepth: 'string' }, 40100);
      await refused({ ...bad, maxDepth: -1 }, 40101);
      await refused({ ...bad, maxDepth: 2.3 }, 40102);
      await refused({ ...bad, from: '' }, 73);
      await refused({ ...bad, as: 0 }, 40103);
      await refused({ ...bad, connectToField: '$a' }, 16410);
      await refused({ ...bad, restrictSearchWithMatch: 'notamatch' }, 40185);
      await refused({ ...bad, notAField: 'foo' }, 40104);
      await refused({ from: 'employees', startWith: 0, connectFromField: 'b', as: 'output' }, 40105);
      await refused({ ...bad, restrictSearchWithMatch: { $where: '3 > 2' } }, 2);
      assert.equal(await coll.countDocuments({}), employees.length);
    });

    it(`on ${where}: explain shows the stage as MongoDB does, a following $unwind folded in`, async () => {
      const db = targets[which]![1];
      const explained = await db.collection('employees').aggregate([
        { $graphLookup: { from: 'employees', startWith: '$reportsTo', connectFromField: 'reportsTo', connectToField: 'name', as: 'chain', maxDepth: 1, depthField: 'd' } },
        { $unwind: '$chain' },
      ]).explain('queryPlanner');
      const stage = findGraphLookup(explained);
      assert.deepEqual(stage, {
        from: 'employees', as: 'chain', connectToField: 'name', connectFromField: 'reportsTo', startWith: '$reportsTo', depthField: 'd', maxDepth: 1,
        unwinding: { preserveNullAndEmptyArrays: false },
      });
    });
  }
});

// The $graphLookup stage wherever explain shows it: a node's `stages`, a router's merger part.
function findGraphLookup(v: unknown): unknown {
  if (Array.isArray(v)) {
    for (const e of v) {
      const found = findGraphLookup(e);
      if (found !== undefined) return found;
    }
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$graphLookup') return x;
      const found = findGraphLookup(x);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
