import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// `up` run as a process, with stand-in roles as its children (test/helpers/fake_up.js).
const FAKE_UP = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/helpers/fake_up.js');

interface UpProcess {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  waitForLine(match: (line: string) => boolean): Promise<string>;
}

function startUp(args: string[], journalFile: string): UpProcess {
  const child = spawn(process.execPath, [FAKE_UP, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DOCSHARD_FAKE_JOURNAL: journalFile } });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLine = async (match: (line: string) => boolean): Promise<string> => {
    for (;;) {
      const found = lines.find(match);
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`up exited with ${child.exitCode}:\n${lines.join('\n')}`);
      await new Promise<void>((wake) => { waiters.push(wake); setTimeout(wake, 200); });
    }
  };
  return { child, lines, exited, waitForLine };
}

// A zombie (dead, not yet reaped by whoever adopted it) has an empty command line.
function isRunning(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== '';
  } catch {
    return false;
  }
}

describe('docshard up (with stand-in roles)', () => {
  let dir: string;
  let journalFile: string;
  const running: UpProcess[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'docshard-up-cmd-'));
    journalFile = path.join(dir, 'journal.txt');
  });

  afterEach(async () => {
    for (const up of running.splice(0)) {
      if (up.child.exitCode === null) up.child.kill('SIGTERM');
      await up.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  function journal(event: string): string[][] {
    return readFileSync(journalFile, 'utf8').trim().split('\n').map((l) => l.split(' ')).filter(([e]) => e === event);
  }

  it('prints the URI and a Cluster ready line, and on SIGTERM stops every child and exits 0', async () => {
    const up = startUp(['--shards', '2', '--port', '0', '--dir', path.join(dir, 'data')], journalFile);
    running.push(up);
    const ready = JSON.parse(await up.waitForLine((l) => l.includes('"Cluster ready"'))) as { uri: string; port: number };
    assert.match(ready.uri, /^mongodb:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(up.lines.includes(ready.uri), 'the plain URI line is printed too');
    up.child.kill('SIGTERM');
    assert.equal(await up.exited, 0);
    assert.deepEqual(journal('stop').map(([, name]) => name).sort(), ['config-0', 'router', 'shard0-0', 'shard1-0']);
  });

  // A closing terminal takes the reader of up's output away and sends SIGHUP to up alone (the
  // children have process groups of their own): up must still stop them all.
  it('stops every child and exits 0 when its terminal closes', async () => {
    const up = startUp(['--shards', '2', '--port', '0', '--dir', path.join(dir, 'data')], journalFile);
    running.push(up);
    await up.waitForLine((l) => l.includes('"Cluster ready"'));
    up.child.stdout!.destroy();
    up.child.kill('SIGHUP');
    assert.equal(await up.exited, 0, up.lines.join('\n'));
    assert.deepEqual(journal('stop').map(([, name]) => name).sort(), ['config-0', 'router', 'shard0-0', 'shard1-0']);
  });

  it('stops the others and exits 1 when a child dies on its own', async () => {
    const up = startUp(['--shards', '2', '--port', '0', '--dir', path.join(dir, 'data')], journalFile);
    running.push(up);
    await up.waitForLine((l) => l.includes('"Cluster ready"'));
    const [, , , pid] = journal('start').find(([, name]) => name === 'shard0-0')!;
    process.kill(Number(pid), 'SIGKILL');
    assert.equal(await up.exited, 1);
    assert.ok(up.lines.some((l) => l.includes('"Child exited unexpectedly"') && l.includes('"child":"shard0-0"')));
    assert.deepEqual(journal('stop').map(([, name]) => name).sort(), ['config-0', 'router', 'shard1-0']);
  });

  // Nothing is left to stop them: each child sees its supervisor pipe close and shuts down.
  it('leaves no child running when it is killed outright', async () => {
    const up = startUp(['--shards', '2', '--port', '0', '--dir', path.join(dir, 'data')], journalFile);
    running.push(up);
    await up.waitForLine((l) => l.includes('"Cluster ready"'));
    const pids = journal('start').map(([, , , pid]) => Number(pid));
    try {
      up.child.kill('SIGKILL');
      const deadline = Date.now() + 5000;
      while (pids.some(isRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(pids.filter(isRunning), [], 'children outlived up by 5 s');
      assert.deepEqual(journal('orphaned').map(([, name]) => name).sort(), ['config-0', 'router', 'shard0-0', 'shard1-0']);
    } finally {
      for (const pid of pids.filter(isRunning)) process.kill(pid, 'SIGKILL');
    }
  });

  it('refuses a shard count that is not a positive integer with exit code 2', async () => {
    const up = startUp(['--shards', 'zero', '--dir', path.join(dir, 'data')], journalFile);
    running.push(up);
    assert.equal(await up.exited, 2);
  });

  // A set has at most 7 voting members; 0 is single processes.
  for (const replicas of [['--replicas', '8'], ['--replicas', '-1'], ['--replicas=-1'], ['--replicas', '']]) {
    it(`refuses ${replicas.join(' ')} with exit code 2 and the usage, starting nothing`, async () => {
      const up = startUp([...replicas, '--port', '0', '--dir', path.join(dir, 'data')], journalFile);
      running.push(up);
      assert.equal(await up.exited, 2);
      assert.match(up.lines.join('\n'), /\nusage:\n {2}docshard up .*--replicas N/);
      assert.equal(existsSync(journalFile), false, 'no child started');
    });
  }
});
