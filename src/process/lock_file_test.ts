import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { acquireLockFile, LockFileHeldError } from './lock_file.js';

const LOCK_FILE_MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lock_file.ts');
const RACERS = 4;

function loggerInto(lines: string[]): pino.Logger {
  return pino({ level: 'info' }, new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString('utf8')); done(); } }));
}

// A process that lives until killed, to hold a pid.
function sleeper(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

// A process that, sent a time on stdin, spins until then (so that racers on different cores start
// together), tries to take the lock file and says "won" or "refused PID"; a winner holds it until
// its stdin closes.
function racer(file: string): { child: ChildProcess; firstLine(): Promise<string> } {
  const script = `
    import { acquireLockFile } from ${JSON.stringify(LOCK_FILE_MODULE)};
    import pino from 'pino';
    process.stdin.once('data', async (start) => {
      while (Date.now() < Number(start)) {}
      try {
        const lock = await acquireLockFile(${JSON.stringify(file)}, pino({ level: 'silent' }));
        process.stdout.write('won\\n');
        process.stdin.once('end', () => { lock.release(); process.exit(0); });
      } catch (err) {
        process.stdout.write(\`refused \${err.holderPid}\\n\`);
        process.exit(0);
      }
    });
    process.stdout.write('ready\\n');`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return { child, firstLine: async () => String((await lines.next()).value) };
}

describe('acquireLockFile', () => {
  let dir: string;
  let file: string;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'docshard-lock-'));
    file = path.join(dir, 'mongod.lock');
  });

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes this process\'s pid first, and removes the file on release', async () => {
    const lock = await acquireLockFile(file, pino({ level: 'silent' }));
    assert.equal(readFileSync(file, 'utf8').split('\n')[0], String(process.pid));
    lock.release();
    assert.equal(existsSync(file), false);
    lock.release();
    assert.deepEqual(readdirSync(dir), [], 'no temporary file is left');
  });

  it('refuses while the process it names lives, naming it, and takes it over once that process is dead', async () => {
    const holder = sleeper();
    children.push(holder);
    writeFileSync(file, `${holder.pid}\n`);
    await assert.rejects(acquireLockFile(file, pino({ level: 'silent' })), (err: unknown) => {
      assert.ok(err instanceof LockFileHeldError);
      assert.equal(err.holderPid, holder.pid);
      assert.ok(err.message.includes(`${file}: process ${holder.pid} holds it`), err.message);
      return true;
    });
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    const logs: string[] = [];
    const lock = await acquireLockFile(file, loggerInto(logs));
    assert.equal(readFileSync(file, 'utf8').split('\n')[0], String(process.pid));
    assert.ok(logs.some((l) => l.includes('"Took over a lock file its dead holder left"') && l.includes(`"stalePid":${holder.pid}`)), logs.join(''));
    lock.release();
  });

  it('takes over a lock whose pid now belongs to a process that started at another time', { skip: !existsSync('/proc/self/stat') }, async () => {
    const other = sleeper();
    children.push(other);
    writeFileSync(file, `${other.pid}\n1\n`);
    const lock = await acquireLockFile(file, pino({ level: 'silent' }));
    assert.equal(readFileSync(file, 'utf8').split('\n')[0], String(process.pid));
    lock.release();
  });

  it('takes over when a process died in the middle of its own take-over', async () => {
    writeFileSync(file, `${await deadPid()}\n`);
    writeFileSync(`${file}.takeover`, `${await deadPid()}\n`);
    const lock = await acquireLockFile(file, pino({ level: 'silent' }));
    assert.equal(existsSync(`${file}.takeover`), false);
    lock.release();
  });

  it('lets exactly one of several processes racing for a stale lock take it, and the others name it', { timeout: 60_000 }, async () => {
    writeFileSync(file, `${await deadPid()}\n`);
    const racers = Array.from({ length: RACERS }, () => racer(file));
    children.push(...racers.map((r) => r.child));
    assert.deepEqual(await Promise.all(racers.map((r) => r.firstLine())), Array(RACERS).fill('ready'));
    const start = Date.now() + 200;
    for (const r of racers) r.child.stdin!.write(`${start}\n`);
    const outcomes = await Promise.all(racers.map((r) => r.firstLine()));
    const winners = racers.filter((_, i) => outcomes[i] === 'won');
    assert.equal(winners.length, 1, outcomes.join(', '));
    const winner = winners[0]!.child;
    assert.deepEqual(outcomes.filter((o) => o !== 'won'), Array(RACERS - 1).fill(`refused ${winner.pid}`));
    assert.equal(readFileSync(file, 'utf8').split('\n')[0], String(winner.pid));
    winner.stdin!.end();
    await Promise.all(racers.map((r) => new Promise((resolve) => (r.child.exitCode === null ? r.child.once('exit', resolve) : resolve(undefined)))));
    assert.deepEqual(readdirSync(dir), [], 'the winner released it and nothing else is left');
  });
});
