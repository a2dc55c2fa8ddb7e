import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import type { Up } from '../helpers/spawn_up.js';
import { withProcesses } from '../helpers/fixtures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MONGOSH = path.join(ROOT, 'node_modules/.bin/mongosh');
const run = promisify(execFile);

// A mongosh launch costs about 2 s of CPU, so each test runs its helpers in one: every step is
// printed with print(), which shows a value as the interactive shell shows a result, after a line
// of its own that marks where the step's output starts; the outputs come back by step. `use` is a
// shell command, not an expression: it goes in `before`, a script of its own run first.
const STEP = '=== mongosh step ';
async function mongosh(uri: string, steps: string[], before: string[] = []): Promise<string[]> {
  const script = steps.map((step, i) => `print(${JSON.stringify(`${STEP}${i}`)});\nprint(${step});`).join('\n');
  const args = [uri, '--quiet', '--norc', ...[...before, script].flatMap((s) => ['--eval', s])];
  const { stdout } = await run(MONGOSH, args, { timeout: 110_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
  const outputs = stdout.split(new RegExp(`^${STEP}\\d+$`, 'm')).map((o) => o.trim());
  assert.equal(outputs.length, steps.length + 1, `one output per step:\n${stdout}`);
  return outputs.slice(1);
}

// The printed document of one sh.status() section (sections are separated by lines of ---).
function section(status: string, name: string): string {
  const parts = status.split(/^---$/m).map((p) => p.trim());
  const found = parts.find((p) => p.startsWith(`${name}\n`));
  assert.ok(found, `sh.status() has no "${name}" section:\n${status}`);
  return found.slice(name.length + 1);
}

// Whitespace-insensitive match of shell output: mongosh wraps short documents onto one line and
// long ones over several.
function assertPrinted(output: string, expected: string): void {
  const squash = (s: string): string => s.replace(/\s+/g, ' ').replace(/([{[]) /g, '$1').replace(/ ([}\]])/g, '$1');
  assert.ok(squash(output).includes(squash(expected)), `expected to find\n${expected}\nin\n${output}`);
}

describe('mongosh sharding helpers against `docshard up`', () => {
  let up: Up;
  let added: SpawnedNode;
  let uri: string;
  // shard0 is the one `up` started; shard0000 is added through sh.addShard.
  const names = ['shard0', 'shard0000'];
  const hosts: string[] = [];

  withProcesses(async (p) => {
    [up, added] = await Promise.all([p.up(1), p.node({ role: 'shard' })]);
    uri = `${up.uri}/test`;
    const client = new MongoClient(up.uri);
    try {
      const listed = await client.db('admin').command({ listShards: 1 });
      hosts.push(listed.shards[0].host, `127.0.0.1:${added.port}`);
    } finally {
      await client.close();
    }
  });

  it('adds a shard to the running cluster and lists both', { timeout: 120_000 }, async () => {
    const [added, listed, command] = await mongosh(uri, [`sh.addShard('${hosts[1]}')`, 'sh.listShards()', 'db.adminCommand({listShards: 1})']);
    // Every reply ends with the router's $clusterTime and operationTime, as mongos's do.
    assertPrinted(added!, "{shardAdded: 'shard0000', ok: 1, '$clusterTime': {clusterTime: Timestamp({");
    assertPrinted(listed!, `_id: 'shard0', host: '${hosts[0]}', state: 1`);
    assertPrinted(listed!, `_id: 'shard0000', host: '${hosts[1]}', state: 1`);
    assertPrinted(command!, `shards: [{_id: 'shard0', host: '${hosts[0]}'`);
    assertPrinted(command!, 'ok: 1');
  });

  it('enables sharding, shards two collections and splits one', { timeout: 120_000 }, async () => {
    const [enabled, , , users, split, , events] = await mongosh(uri, [
      "sh.enableSharding('app', 'shard0')",
      "db.getSiblingDB('app').users.insertMany(Array.from({length: 100}, (_, i) => ({uid: i})))",
      "db.getSiblingDB('app').users.createIndex({uid: 1})",
      "sh.shardCollection('app.users', {uid: 1})",
      "sh.splitAt('app.users', {uid: 50})",
      // A hashed key on an empty collection spreads its initial chunks over both shards.
      "sh.shardCollection('app.events', {k: 'hashed'})",
      "Object.keys(db.getSiblingDB('app').events.insertMany(Array.from({length: 200}, (_, i) => ({k: i, pad: 'x'.repeat(100)}))).insertedIds).length",
    ]);
    assertPrinted(enabled!, "{ok: 1, '$clusterTime': {");
    assertPrinted(users!, "collectionsharded: 'app.users'");
    assertPrinted(split!, "{ok: 1, '$clusterTime': {");
    assert.equal(events, '200');
  });

  it('renames a sharded collection with db.coll.renameCollection(), refines its key and repeats sh.shardCollection', { timeout: 120_000 }, async () => {
    const [sharded, again, conflicting, , renamed, count, , refined, key, collectionChecked, databaseChecked] = await mongosh(uri, [
      "sh.shardCollection('app.ren', {r: 1})",
      "sh.shardCollection('app.ren', {r: 1})",
      "(() => { try { sh.shardCollection('app.ren', {other: 1}); return 'no error'; } catch (e) { return e.codeName; } })()",
      "db.getSiblingDB('app').ren.insertMany(Array.from({length: 30}, (_, i) => ({r: i, s: i % 3})))",
      "db.getSiblingDB('app').ren.renameCollection('renamed')",
      "db.getSiblingDB('app').renamed.countDocuments()",
      "db.getSiblingDB('app').renamed.createIndex({r: 1, s: 1})",
      "db.adminCommand({refineCollectionShardKey: 'app.renamed', key: {r: 1, s: 1}})",
      "db.getSiblingDB('config').collections.findOne({_id: 'app.renamed'}).key",
      "db.getSiblingDB('app').renamed.checkMetadataConsistency().toArray().length",
      "db.getSiblingDB('app').checkMetadataConsistency().toArray().length",
    ]);
    assertPrinted(sharded!, "collectionsharded: 'app.ren'");
    assertPrinted(again!, "collectionsharded: 'app.ren'");
    assert.equal(conflicting, 'AlreadyInitialized');
    assertPrinted(renamed!, '{ok: 1}');
    assert.equal(count, '30');
    assertPrinted(refined!, "{ok: 1, '$clusterTime': {");
    assertPrinted(key!, '{r: 1, s: 1}');
    assert.equal(collectionChecked, '0');
    assert.equal(databaseChecked, '0');
  });

  it('sh.status() prints the shards, databases, collections and chunks per shard', { timeout: 120_000 }, async () => {
    const [status] = await mongosh(uri, ['sh.status()']);
    assertPrinted(section(status!, 'shards'), `{_id: 'shard0', host: '${hosts[0]}', state: 1,`);
    assertPrinted(section(status!, 'shards'), `{_id: 'shard0000', host: '${hosts[1]}', state: 1,`);
    assertPrinted(section(status!, 'active mongoses'), "[{'7.0.0': 1}]");
    assertPrinted(section(status!, 'balancer'), "'Currently enabled': 'yes'");
    // The balancer is on, so a round may be under way when mongosh asks.
    assert.match(section(status!, 'balancer'), /'Currently running': '(no|yes)'/);
    const databases = section(status!, 'databases');
    assertPrinted(databases, "database: {_id: 'app', primary: 'shard0',");
    assertPrinted(databases, "'app.users': {shardKey: {uid: 1}, unique: false, balancing: true,");
    assertPrinted(databases, "chunkMetadata: [{shard: 'shard0', nChunks: 2}]");
    assertPrinted(databases, "{min: {uid: MinKey()}, max: {uid: 50}, 'on shard': 'shard0'");
    assertPrinted(databases, "{min: {uid: 50}, max: {uid: MaxKey()}, 'on shard': 'shard0'");
    assertPrinted(databases, "'app.events': {shardKey: {k: 'hashed'},");
    assertPrinted(databases, "chunkMetadata: [{shard: 'shard0', nChunks: 2}, {shard: 'shard0000', nChunks: 2}]");
    assertPrinted(databases, "database: {_id: 'config', primary: 'config', partitioned: true}");
    const distribution = section(status!, 'shardedDataDistribution');
    assertPrinted(distribution, "{ns: 'app.users', shards: [{shardName: 'shard0', numOrphanedDocs: 0, numOwnedDocuments: 100,");
    assertPrinted(distribution, "{ns: 'app.events', shards: [{shardName: 'shard0',");
  });

  it('getShardDistribution() prints each shard\'s share of the data', { timeout: 120_000 }, async () => {
    const [out, users] = await mongosh(uri, ["db.getSiblingDB('app').events.getShardDistribution()", "db.getSiblingDB('app').users.getShardDistribution()"]);
    const docs = names.map((name, i) => {
      const block = out!.split(`Shard ${name} at ${hosts[i]}`)[1];
      assert.ok(block, `no block for ${name}:\n${out}`);
      assertPrinted(block, 'chunks: 2,');
      return Number(/docs: (\d+)/.exec(block)![1]);
    });
    assert.ok(docs.every((n) => n > 0), 'a hashed key spreads the documents over both shards');
    assert.equal(docs[0]! + docs[1]!, 200);
    const totals = out!.split('Totals')[1]!;
    assertPrinted(totals, 'docs: 200, chunks: 4,');
    // Equal-sized documents: each shard's share of the data is its share of the documents.
    docs.forEach((n, i) => {
      const pct = Math.floor((n / 200) * 10000) / 100;
      assertPrinted(totals, `'Shard ${names[i]}': ['${pct} % data', '${pct} % docs in cluster',`);
    });
    assertPrinted(users!, `Shard shard0 at ${hosts[0]} {data:`);
    assertPrinted(users!, 'docs: 100, chunks: 2,');
    assertPrinted(users!, "'Shard shard0': ['100 % data', '100 % docs in cluster',");
  });

  it('reports the balancer and reads config.chunks', { timeout: 120_000 }, async () => {
    // On by default, as in MongoDB; sh.stopBalancer() and sh.startBalancer() switch it.
    const [on, running, , off, stopped, status, , onAgain, , noBalance, , balancing, chunks, added] = await mongosh(uri, [
      'sh.getBalancerState()',
      'sh.isBalancerRunning()',
      'sh.stopBalancer()',
      'sh.getBalancerState()',
      'sh.isBalancerRunning()',
      'sh.status()',
      'sh.startBalancer()',
      'sh.getBalancerState()',
      "sh.disableBalancing('app.users')",
      "db.getSiblingDB('config').collections.findOne({_id: 'app.users'}).noBalance",
      "sh.enableBalancing('app.users')",
      "db.getSiblingDB('config').collections.findOne({_id: 'app.users'}).noBalance",
      "db.chunks.find({uuid: db.collections.findOne({_id: 'app.users'}).uuid}, {_id: 0, min: 1, max: 1, shard: 1}).sort({min: 1}).toArray()",
      "db.chunks.countDocuments({shard: 'shard0000'})",
    ], ['use config']);
    assert.equal(on, 'true');
    assert.match(running!.replace(/\s+/g, ' '), /mode: 'full', inBalancerRound: (true|false), numBalancerRounds: Long\('\d+'\)/);
    assert.equal(off, 'false');
    assertPrinted(stopped!, "mode: 'off', inBalancerRound: false");
    assertPrinted(status!, "'Currently enabled': 'no'");
    assert.equal(onAgain, 'true');
    assert.equal(noBalance, 'true');
    assert.equal(balancing, 'false');
    assertPrinted(chunks!, "[{min: {uid: MinKey()}, max: {uid: 50}, shard: 'shard0'}, {min: {uid: 50}, max: {uid: MaxKey()}, shard: 'shard0'}]");
    assert.equal(added, '2');
  });
});
