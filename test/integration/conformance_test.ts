import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { removeDir, spawnNode } from '../helpers/spawn_node.js';
import { spawnCluster } from '../helpers/spawn_cluster.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CRUD_TESTS = path.resolve(ROOT, '../shared/compat/specs/crud/tests/unified');
const run = promisify(execFile);

async function conformance(args: string[], minimumRate: number): Promise<void> {
  const result = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/conformance/run.ts'), ...args, CRUD_TESTS], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 })
    .catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  const last = result.stdout.trim().split('\n').pop() ?? '';
  const m = /^(\d+) passed, (\d+) failed, (\d+) skipped$/.exec(last);
  assert.ok(m, `runner summary line missing: ${last}`);
  const [passed, failed] = [Number(m[1]), Number(m[2])];
  assert.ok(passed > 200, `only ${passed} tests passed`);
  assert.ok(passed / (passed + failed) >= minimumRate, `pass rate ${passed}/${passed + failed} is below ${minimumRate * 100}%:\n${result.stdout}`);
}

describe('driver specification conformance', () => {
  it('passes at least 95% of the applicable unified CRUD tests against one node', { timeout: 300_000 }, async () => {
    const node = await spawnNode();
    try {
      await conformance(['--uri', `mongodb://127.0.0.1:${node.port}`], 0.95);
    } finally {
      await node.stop();
      removeDir(node.dbpath);
    }
  });

  it('passes at least 90% through a router with every collection sharded on {_id: "hashed"}', { timeout: 600_000 }, async () => {
    const cluster = await spawnCluster({ shards: 2 });
    try {
      await conformance(['--uri', cluster.routers[0]!.uri, '--shard-collections'], 0.9);
    } finally {
      await cluster.stop();
    }
  });
});
