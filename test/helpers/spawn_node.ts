import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { docshardTestBin } from './test_bin.js';

export interface SpawnedNode {
  port: number;
  dbpath: string;
  uri: string;
  child: ChildProcess;
  logs: string[];
  // SIGKILL, as `kill -9`: nothing gets a chance to flush.
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

export function tempDir(prefix = 'docshard-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export interface SpawnNodeOptions {
  dbpath?: string;
  role?: 'shard' | 'config';
  // Ephemeral when absent; a restarted shard needs its old one, since config.shards names it by host:port.
  port?: number;
  extraArgs?: string[];
  // bin/docshard.js of another checkout (a benchmark's baseline); this checkout's sources, bundled
  // (test_bin.ts), otherwise.
  bin?: string;
  // Added to the test process's environment (libfaketime's LD_PRELOAD and FAKETIME_* for a skewed clock).
  env?: Record<string, string>;
}

// DOCSHARD_NODE_FLAGS passes Node flags (e.g. --cpu-prof, which NODE_OPTIONS refuses) to every
// process a test or benchmark starts, to profile them.
export function nodeFlags(): string[] {
  return process.env.DOCSHARD_NODE_FLAGS?.split(' ').filter((f) => f !== '') ?? [];
}

// Starts a real docshard node process and waits until it listens.
export async function spawnNode(options: SpawnNodeOptions = {}): Promise<SpawnedNode> {
  const dbpath = options.dbpath ?? tempDir();
  const args = [...nodeFlags(), options.bin ?? await docshardTestBin(), options.role ?? 'shard', '--port', String(options.port ?? 0), '--dbpath', dbpath, ...(options.extraArgs ?? [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env === undefined ? undefined : { ...process.env, ...options.env } });
  const logs: string[] = [];
  child.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start: ${logs.join('')}`)), 30_000);
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      logs.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'Waiting for connections' && entry.port) {
          clearTimeout(timer);
          resolve(entry.port);
        }
      } catch {
        // not a JSON line
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code}: ${logs.join('\n')}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    port,
    dbpath,
    uri: `mongodb://127.0.0.1:${port}/?directConnection=true`,
    child,
    logs,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

// Starts a stopped node again on its dbpath and port; the port may still be held for a moment
// after a kill, so a failed start is retried briefly.
export async function restartNode(old: SpawnedNode, options: Omit<SpawnNodeOptions, 'dbpath' | 'port'>): Promise<SpawnedNode> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnNode({ ...options, dbpath: old.dbpath, port: old.port });
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export interface FinishedRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Runs docshard with ARGS to its end and gives back all it wrote: for a start expected to be
// refused. Killed if it is still running after the timeout (it then did not refuse).
export async function runDocshard(args: string[], timeoutMs = 30_000): Promise<FinishedRun> {
  const child = spawn(process.execPath, [...nodeFlags(), await docshardTestBin(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => { out.stdout += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out.stderr += d.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  // 'close' rather than 'exit': it comes after the last of the output.
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, ...out };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

// Test documents use plain numbers and strings as _id, which the driver's default typing forbids.
// (any: the driver infers the _id type from this field)
export type AnyDoc = any;
