import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { MongoWriteConcernError, type MongoClient } from 'mongodb';
import { DRIVER_SPECS, skipWithoutDriverSpecs } from '../helpers/driver_specs.js';
import {
  assertPassRate, conformance, CRUD_DIR, outcomes, ROUTER_CRUD_KNOWN_FAILURES, SESSION_DIRS, TRANSACTION_DIRS, TRANSACTION_SUITES_KNOWN_FAILURES,
  unexpectedFailures,
} from '../helpers/conformance_run.js';
import { withProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { spawnSetCluster } from '../helpers/spawn_set_cluster.js';

// Issue 32's first acceptance point: the unified CRUD, retryable-writes, transactions, sessions and
// causal-consistency tests through two routers over two shards that are 3-member sets, the config
// server a 3-member set too, every collection sharded on {_id: 'hashed'} (--shard-collections).
// The same tests through routers over single-node shards (conformance_slow_test.ts) fail only
// where a sharded collection has no insertion order or DDL in a transaction shows early; here
// the router also passes write concerns and read preferences on to sets, commits on them and
// follows their primaries, and the shards replicate two-phase commits.
describe('driver specification conformance through two routers over shards that are 3-member sets', () => {
  let uri: string;
  let client: MongoClient;
  // Fail points on every process; MongoDB's default election timeout (10 s), so that a member
  // slowed by a busy machine does not start an election during the run.
  withProcesses(async (p) => {
    const cluster = await spawnSetCluster(p, { shards: 2, members: 3, configMembers: 3, routers: 2, args: ['--enableTestCommands'] });
    // Clients with useMultipleMongoses get both routers, the others the first (entities.ts).
    uri = `mongodb://${cluster.routers.map((r) => `127.0.0.1:${r.port}`).join(',')}/`;
    client = p.connect(cluster.routers[0]!.uri);
  });

  // As the transactions suite's "write concern error on commit" asks of one shard, and of two, where
  // the router asks the coordinator: the commit is done, and the client is told it is not
  // replicated as asked (a set of 3 cannot satisfy w: 10: UnsatisfiableWriteConcern).
  it('answers a transaction committed with a write concern the sets cannot satisfy with their writeConcernError, on one shard and over two', { timeout: 120_000 }, async () => {
    await client.db('admin').command({ shardCollection: 'commitwc.docs', key: { _id: 'hashed' } });
    const docs = client.db('commitwc').collection<AnyDoc>('docs');
    for (const ids of [[1], [2, 3, 4, 5, 6, 7, 8, 9]]) {
      const session = client.startSession();
      try {
        session.startTransaction({ writeConcern: { w: 10 } });
        await docs.insertMany(ids.map((_id) => ({ _id })), { session });
        await assert.rejects(session.commitTransaction(), (err: unknown) => {
          assert.ok(err instanceof MongoWriteConcernError, String(err));
          assert.equal(err.code, 100, err.message);
          return true;
        });
      } finally {
        await session.endSession();
      }
    }
    const perShard = await docs.aggregate<AnyDoc>([{ $collStats: { count: {} } }]).toArray();
    assert.deepEqual(perShard.map((s) => s.count > 0), [true, true], 'the second transaction wrote to both shards');
    assert.equal(await docs.countDocuments(), 9);
  });

  it('passes at least 95% of the unified CRUD tests, failing only the known ones', { timeout: 900_000, skip: skipWithoutDriverSpecs(CRUD_DIR) }, async (t) => {
    const totals = await conformance(['--uri', uri, '--shard-collections', path.join(DRIVER_SPECS, CRUD_DIR)]);
    t.diagnostic(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
    assert.deepEqual(unexpectedFailures(totals, ROUTER_CRUD_KNOWN_FAILURES), [], totals.output);
    assertPassRate(totals, 0.95);
  });

  it('passes every unified sessions, retryable-writes and causal-consistency test that applies to a sharded cluster', { timeout: 600_000, skip: skipWithoutDriverSpecs(...SESSION_DIRS) }, async (t) => {
    const totals = await conformance(['--uri', uri, '--shard-collections', ...SESSION_DIRS.map((dir) => path.join(DRIVER_SPECS, dir))]);
    t.diagnostic(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
    assert.deepEqual(outcomes(totals).filter((line) => !line.startsWith('PASS')), [], totals.output);
    assert.ok(totals.passed >= 113, `only ${totals.passed} tests passed:\n${totals.output}`);
  });

  it('passes the unified transactions and transactions-convenient-api tests but for the known failures', { timeout: 900_000, skip: skipWithoutDriverSpecs(...TRANSACTION_DIRS) }, async (t) => {
    const totals = await conformance(['--uri', uri, '--shard-collections', ...TRANSACTION_DIRS.map((dir) => path.join(DRIVER_SPECS, dir))]);
    t.diagnostic(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
    assert.deepEqual(unexpectedFailures(totals, TRANSACTION_SUITES_KNOWN_FAILURES), [], totals.output);
    // 265 of the 278 that apply: 95.3%.
    assert.ok(totals.passed >= 265, `only ${totals.passed} tests passed:\n${totals.output}`);
  });
});
