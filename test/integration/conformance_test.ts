import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { removeDir, spawnNode } from '../helpers/spawn_node.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CRUD_TESTS = path.resolve(ROOT, '../shared/compat/specs/crud/tests/unified');
const run = promisify(execFile);

describe('driver specification conformance', () => {
  it('passes at least 95% of the applicable unified CRUD tests against one node', { timeout: 300_000 }, async () => {
    const node = await spawnNode();
    try {
      const result = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/conformance/run.ts'), '--uri', `mongodb://127.0.0.1:${node.port}`, CRUD_TESTS], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 })
        .catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const last = result.stdout.trim().split('\n').pop() ?? '';
      const m = /^(\d+) passed, (\d+) failed, (\d+) skipped$/.exec(last);
      assert.ok(m, `runner summary line missing: ${last}`);
      const [passed, failed] = [Number(m[1]), Number(m[2])];
      assert.ok(passed > 200, `only ${passed} tests passed`);
      assert.ok(passed / (passed + failed) >= 0.95, `pass rate ${passed}/${passed + failed} is below 95%:\n${result.stdout}`);
    } finally {
      await node.stop();
      removeDir(node.dbpath);
    }
  });
});
