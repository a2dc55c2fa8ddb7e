import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnChildNode } from './child_node.js';

// A stand-in program, so that these tests do not depend on every role of the real one.
const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/helpers/fake_docshard.js');

describe('a child node', () => {
  it('reports the port from its listening line, logs to its file and exits 0 when stopped', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-child-'));
    try {
      const logFile = path.join(dir, 'shard.log');
      process.env.DOCSHARD_FAKE_JOURNAL = path.join(dir, 'journal.txt');
      const node = spawnChildNode({ name: 'shard0', args: ['shard', '--port', '0', '--dbpath', path.join(dir, 'db')], logFile, bin: FAKE_BIN });
      const port = await node.ready;
      assert.ok(port > 0);
      assert.deepEqual(await node.stop(), { code: 0, signal: null });
      const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg: string; port?: number });
      assert.equal(lines.find((l) => l.msg === 'Waiting for connections')?.port, port);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails to become ready when it exits before listening', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-child-'));
    try {
      const node = spawnChildNode({ name: 'broken', args: ['shard', '--no-such-flag'], logFile: path.join(dir, 'broken.log'), bin: FAKE_BIN });
      await assert.rejects(node.ready, /broken exited \(code 1\) before listening/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
