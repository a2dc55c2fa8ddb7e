import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { WireClient } from '../wire/client.js';
import { ShardRegistry } from './shard_registry.js';

const CONFIG = 'config.test:1';

// config.shards on a config server that counts the times it is read.
class FakeConfigServer extends WireClient {
  shards: Doc[] = [];
  reads = 0;

  override async command(host: string, db: string, cmd: Doc): Promise<Doc> {
    assert.equal(host, CONFIG);
    assert.equal(db, 'config');
    assert.equal(cmd.find, 'shards');
    this.reads += 1;
    return { cursor: { id: 0, ns: 'config.shards', firstBatch: [...this.shards] }, ok: 1 };
  }
}

const shard = (id: string, port: number): Doc => ({ _id: id, host: `127.0.0.1:${port}`, state: 1 });

describe('ShardRegistry', () => {
  let config: FakeConfigServer;
  let registry: ShardRegistry;

  beforeEach(() => {
    config = new FakeConfigServer();
    config.shards = [shard('s0', 1000), shard('s1', 1001)];
    registry = new ShardRegistry(config, CONFIG);
  });

  test('reads config.shards once and answers the list and known hosts from the cache', async () => {
    assert.deepEqual((await registry.all()).map((s) => s._id), ['s0', 's1']);
    assert.equal(await registry.host('s1'), '127.0.0.1:1001');
    assert.equal(registry.cachedHost('s0'), '127.0.0.1:1000');
    assert.deepEqual((await registry.all()).map((s) => s._id), ['s0', 's1']);
    assert.equal(config.reads, 1);
  });

  test('a shard id it does not know makes host() reload, so a shard added since is found', async () => {
    await registry.all();
    config.shards.push(shard('s2', 1002));
    assert.equal(registry.cachedHost('s2'), undefined, 'cachedHost never waits on a reload');
    assert.equal(config.reads, 1);
    assert.equal(await registry.host('s2'), '127.0.0.1:1002');
    assert.equal(config.reads, 2);
    assert.equal(registry.cachedHost('s2'), '127.0.0.1:1002');
  });

  test('a shard id still unknown after the reload is ShardNotFound', async () => {
    await assert.rejects(registry.host('nope'), (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.ShardNotFound && /nope/.test(err.message));
    assert.equal(config.reads, 1);
  });

  test('reload() replaces the whole list: a removed shard is forgotten', async () => {
    await registry.all();
    config.shards = [shard('s1', 1001)];
    await registry.reload();
    assert.deepEqual((await registry.all()).map((s) => s._id), ['s1']);
    assert.equal(registry.cachedHost('s0'), undefined);
    assert.equal(config.reads, 2);
  });
});
