import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleDocshard } from '../../build/bundle.js';
import { copyDocshardTree } from '../helpers/docshard_tree.js';
import { removeDir, tempDir } from '../helpers/spawn_node.js';
import { startUp } from '../helpers/spawn_up.js';

const FALLBACK_NOTE = 'running them through tsx';

// What `node bin/docshard.js --help` writes (the usage, on stderr) and its exit code.
function help(bin: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [bin, '--help'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

// Changes `from` to `to` in a source file of the tree but sets its time to before the build in
// `dist`, so that bin/docshard.js takes the build for current: which of the two texts a process
// shows says whether it ran the build or the sources.
function editUnnoticed(file: string, from: string, to: string, dist: string): void {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${file} has no ${from}`);
  writeFileSync(file, text.replace(from, to));
  const beforeBuild = new Date(builtAt(dist) - 60_000);
  utimesSync(file, beforeBuild, beforeBuild);
}

// When the build in `dist` began, in milliseconds.
function builtAt(dist: string): number {
  return (JSON.parse(readFileSync(path.join(dist, 'build.json'), 'utf8')) as { builtAt: number }).builtAt;
}

// The command lines of the live processes whose parent is `ppid`, from /proc.
function childCommandLines(ppid: number): string[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== ppid) return [];
      return [readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ')];
    } catch {
      return []; // it exited while /proc was read
    }
  });
}

describe('bin/docshard.js', () => {
  const tree = copyDocshardTree();
  const dist = path.join(tree.dir, 'dist');
  const cli = path.join(tree.dir, 'src', 'process', 'cli.ts');
  after(() => tree.remove());

  it('runs the build in dist/ while every source is older than it, and the sources through tsx once one is newer or dist/ is gone', { timeout: 180_000 }, async () => {
    await bundleDocshard(tree.dir, dist);
    editUnnoticed(cli, 'const USAGE = `usage:', 'const USAGE = `usage (edited after the build):', dist);
    // Written within the millisecond the build began in (so, before it read it: the build's time
    // is in whole milliseconds), a file leaves the build current.
    const sameMillisecond = (builtAt(dist) + 0.5) / 1000;
    utimesSync(path.join(tree.dir, 'tsconfig.json'), sameMillisecond, sameMillisecond);

    const fromDist = await help(tree.bin);
    assert.equal(fromDist.code, 0);
    assert.match(fromDist.stderr, /^usage:\n/);

    const now = new Date();
    utimesSync(cli, now, now);
    const fromSources = await help(tree.bin);
    assert.equal(fromSources.code, 0);
    assert.match(fromSources.stderr, /^docshard: dist\/ is missing or older than the sources; running them through tsx/);
    assert.match(fromSources.stderr, /\nusage \(edited after the build\):\n/);

    rmSync(dist, { recursive: true });
    const noDist = await help(tree.bin);
    assert.equal(noDist.code, 0);
    assert.match(noDist.stderr, /\nusage \(edited after the build\):\n/);
  });

  it('starts `docshard up` from the build: every process runs it, and the console serves its files and uPlot\'s', { timeout: 180_000 }, async () => {
    await bundleDocshard(tree.dir, dist);
    // Each process logs under its logger's name: the sources now name it otherwise.
    editUnnoticed(cli, 'createLogger(`docshard-${role}`)', 'createLogger(`docshard-edited-${role}`)', dist);
    const dir = tempDir('docshard-built-up-');
    const up = await startUp(dir, 1, [], tree.bin);
    try {
      for (const file of ['/', '/console.js', '/uPlot.iife.min.js']) {
        const res = await fetch(new URL(file, up.consoleUrl));
        assert.equal(res.status, 200, file);
        assert.ok((await res.text()).length > 0, file);
      }
      assert.ok(!up.output.join('').includes(FALLBACK_NOTE), up.output.join(''));
      const logs = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.log'));
      assert.ok(logs.length >= 3, `logs: ${logs.join(', ')}`);
      for (const log of logs) {
        const text = readFileSync(path.join(dir, log), 'utf8');
        assert.match(text, /"name":"docshard-(config|shard|router)"/, log);
        assert.ok(!text.includes('docshard-edited-') && !text.includes(FALLBACK_NOTE), log);
      }
    } finally {
      up.child.kill('SIGTERM');
      assert.equal(await up.exited, 0);
      removeDir(dir);
    }
  });

  it('a bundle built into a linked node_modules, as the tests\' own, finds its tree\'s files: `up` from it starts the tree\'s bin/docshard.js', { timeout: 180_000 }, async () => {
    // The tree's node_modules links to the checkout's, so the bundle's real folder is outside the
    // tree, where Node runs it from.
    const bundle = await bundleDocshard(tree.dir, path.join(tree.dir, 'node_modules', '.cache', 'docshard-built-bin-test', `${process.pid}`));
    const dir = tempDir('docshard-bundle-up-');
    const up = await startUp(dir, 1, [], bundle);
    try {
      const children = childCommandLines(up.child.pid!);
      assert.equal(children.length, 3, children.join('\n'));
      for (const cmdline of children) assert.ok(cmdline.includes(` ${tree.bin} `), cmdline);
    } finally {
      up.child.kill('SIGTERM');
      assert.equal(await up.exited, 0);
      removeDir(dir);
      rmSync(path.dirname(bundle), { recursive: true, force: true });
    }
  });
});
