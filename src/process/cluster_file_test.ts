import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readClusterFile, writeClusterFile } from './cluster_file.js';

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-cluster-file-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('cluster.json', () => {
  it('reads back what was written', () => withDir((dir) => {
    const file = { configPort: 40001, shards: [{ name: 'shard0', port: 40002 }, { name: 'shard1', port: 40003 }] };
    writeClusterFile(dir, file);
    assert.deepEqual(readClusterFile(dir), file);
  }));

  it('is absent in a new directory', () => withDir((dir) => {
    assert.equal(readClusterFile(dir), undefined);
  }));

  it('refuses a file that does not describe a cluster', () => withDir((dir) => {
    writeFileSync(path.join(dir, 'cluster.json'), '{"configPort": "x", "shards": []}');
    assert.throws(() => readClusterFile(dir), /is not a cluster file/);
  }));
});
