import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { UUID } from 'bson';
import { MongoClient, type Document } from 'mongodb';
import { startNode, type RunningNode } from './node_process.js';
import { DEFAULT_PARAMETERS } from './set_parameter.js';

// Each node role answers from its own command table: a command of the other role is refused as
// it was when both roles shared one table, over the wire, as a client sees it.
describe('the command tables of a shard and a config server', () => {
  const dirs: string[] = [];
  const nodes: RunningNode[] = [];
  const clients: MongoClient[] = [];
  let shard: MongoClient;
  let config: MongoClient;

  async function start(role: 'shard' | 'config'): Promise<MongoClient> {
    const dir = mkdtempSync(path.join(tmpdir(), `docshard-roles-${role}-`));
    dirs.push(dir);
    const node = await startNode({ role, port: 0, bindIp: '127.0.0.1', dbpath: dir, enableTestCommands: false, maxConns: 1000, parameters: DEFAULT_PARAMETERS }, pino({ level: 'silent' }), []);
    nodes.push(node);
    const client = new MongoClient(`mongodb://127.0.0.1:${node.port}/?directConnection=true`);
    clients.push(client);
    return client;
  }

  async function answer(client: MongoClient, db: string, cmd: Document): Promise<Document> {
    try {
      return await client.db(db).command(cmd);
    } catch (err) {
      const e = err as { code?: number; codeName?: string; errmsg?: string };
      return { ok: 0, code: e.code, codeName: e.codeName, errmsg: e.errmsg };
    }
  }

  before(async () => {
    shard = await start('shard');
    config = await start('config');
  });
  after(async () => {
    for (const c of clients) await c.close();
    for (const n of nodes) await n.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a shard does not know the config server\'s commands', async () => {
    for (const [db, cmd] of [['admin', { _configsvrAddShard: 'localhost:1' }], ['admin', { balancerStatus: 1 }], ['admin', { _configsvrRemoveShard: 's' }]] as const) {
      const name = Object.keys(cmd)[0]!;
      assert.deepEqual(await answer(shard, db, cmd), { ok: 0, code: 59, codeName: 'CommandNotFound', errmsg: `no such command: '${name}'` });
    }
  });

  it('a config server refuses a shard\'s DDL commands as a shard outside a cluster does', async () => {
    for (const cmd of [{ _shardsvrDropCollection: 'c' }, { _shardsvrMovePrimary: 'd', to: 's' }, { _shardsvrParticipantBlock: 'c', blockType: 'Writes', reason: {} }]) {
      const name = Object.keys(cmd)[0]!;
      const refusal = { ok: 0, code: 20, codeName: 'IllegalOperation', errmsg: `${name} can only be run on a shard that belongs to a cluster` };
      assert.deepEqual(await answer(config, 'd', cmd), refusal, `config server, ${name}`);
      assert.deepEqual(await answer(shard, 'd', cmd), refusal, `shard outside a cluster, ${name}`);
    }
  });

  it('a config server writes a DDL participant\'s no-op under its coordinator\'s session before refusing it', async () => {
    const lsid = { id: new UUID() };
    const cmd = { _shardsvrDropCollectionParticipant: 'c', lsid, txnNumber: 1 };
    assert.equal((await answer(config, 'd', cmd)).code, 20);
    const noop = await config.db('admin').collection<{ _id: string; count: number }>('system.version').findOne({ _id: '_shardsvrDropCollectionParticipant' });
    assert.equal(noop?.count, 1);
  });

  it('lists each role\'s commands', async () => {
    const shardNames = Object.keys((await shard.db('admin').command({ listCommands: 1 })).commands as Document);
    const configNames = Object.keys((await config.db('admin').command({ listCommands: 1 })).commands as Document);
    assert.ok(shardNames.includes('_shardsvrDropCollection') && !shardNames.includes('_configsvrAddShard') && !shardNames.includes('balancerStart'));
    assert.ok(configNames.includes('_shardsvrDropCollection') && configNames.includes('_configsvrAddShard') && configNames.includes('balancerStart'));
    assert.deepEqual(shardNames.filter((n) => !configNames.includes(n)), []);
  });
});
