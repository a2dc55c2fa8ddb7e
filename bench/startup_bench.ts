import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { bundleDocshard } from '../build/bundle.js';
import { copyDocshardTree, type DocshardTree } from '../test/helpers/docshard_tree.js';
import { removeDir, tempDir } from '../test/helpers/spawn_node.js';
import { cpuSeconds } from './proc_cpu.js';
import { printTable } from './table.js';

// npm run bench -- startup: what a docshard process pays before it serves, started from the
// TypeScript sources through tsx and from the build in dist/, side by side in one run. Two copies
// of this checkout are started through their bin/docshard.js, one without dist/ and one built:
// a shard started alone, CPU (user + system) and wall time until it logs that it listens; and
// `docshard up --shards 2`, wall time until it prints that the cluster is ready and the CPU of it
// and its four processes by then. Rounds alternate between the two; a first start of each is not
// counted (it fills the page cache and tsx's transform cache).

const PROCESS_ROUNDS = 8;
const UP_ROUNDS = 4;

// ranFromSources: whether bin/docshard.js said it ran the sources (in any of the processes).
interface Start { cpu: number; ms: number; ranFromSources: boolean }

const FALLBACK_NOTE = 'running them through tsx';

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

// Starts `bin` with `args` and waits for a stdout line that holds `readyText`; then `measure` sees
// the process, and it is stopped with SIGTERM.
async function startOnce(bin: string, args: string[], readyText: string, measure: (pid: number) => number): Promise<Start> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const start = await new Promise<Omit<Start, 'ranFromSources'>>((resolve, reject) => {
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      if (!pending.includes(readyText)) return;
      const ms = performance.now() - started;
      resolve({ cpu: measure(child.pid!), ms });
      pending = '';
    });
    void exited.then(() => reject(new Error(`${bin} ${args.join(' ')} exited before "${readyText}"`)));
  });
  child.kill('SIGTERM');
  await exited;
  return { ...start, ranFromSources: stderr.includes(FALLBACK_NOTE) };
}

// CPU of `pid` and of the processes it started.
function treeCpuSeconds(pid: number): number {
  let total = cpuSeconds(pid);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) total += cpuSeconds(Number(name));
    } catch {
      // it exited while /proc was read
    }
  }
  return total;
}

async function startShard(tree: DocshardTree): Promise<Start> {
  const dbpath = tempDir('docshard-bench-startup-');
  try {
    return await startOnce(tree.bin, ['shard', '--port', '0', '--dbpath', dbpath], '"Waiting for connections"', cpuSeconds);
  } finally {
    removeDir(dbpath);
  }
}

async function startUp(tree: DocshardTree): Promise<Start> {
  const dir = tempDir('docshard-bench-startup-up-');
  try {
    const start = await startOnce(tree.bin, ['up', '--shards', '2', '--port', '0', '--dir', dir], '"Cluster ready"', treeCpuSeconds);
    // Its processes write their stderr into their logs.
    const logs = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.log'));
    const childFellBack = logs.some((log) => readFileSync(path.join(dir, log), 'utf8').includes(FALLBACK_NOTE));
    return { ...start, ranFromSources: start.ranFromSources || childFellBack };
  } finally {
    removeDir(dir);
  }
}

async function rounds(trees: DocshardTree[], n: number, start: (tree: DocshardTree) => Promise<Start>): Promise<Start[][]> {
  const results: Start[][] = trees.map(() => []);
  for (const tree of trees) await start(tree);
  for (let round = 0; round < n; round++) {
    for (const [i, tree] of trees.entries()) results[i]!.push(await start(tree));
  }
  return results;
}

const seconds = (x: number): string => `${x.toFixed(2)} s`;

function rows(label: string, [source, built]: Start[][]): string[][] {
  const row = (what: string, pick: (s: Start) => number): string[] => {
    const [a, b] = [median(source!.map(pick)), median(built!.map(pick))];
    return [`${label}: ${what}`, seconds(a), seconds(b), (b / a).toFixed(2)];
  };
  return [row('CPU', (s) => s.cpu), row('wall', (s) => s.ms / 1000)];
}

export async function runStartupBench(): Promise<void> {
  const source = copyDocshardTree();
  const built = copyDocshardTree();
  try {
    await bundleDocshard(built.dir, path.join(built.dir, 'dist'));
    const trees = [source, built];
    const shard = await rounds(trees, PROCESS_ROUNDS, startShard);
    const up = await rounds(trees, UP_ROUNDS, startUp);
    // A comparison only if each copy ran what it stands for, every time.
    for (const [i, ranFromSources] of [true, false].entries()) {
      if ([...shard[i]!, ...up[i]!].some((start) => start.ranFromSources !== ranFromSources)) throw new Error(`the ${ranFromSources ? 'unbuilt' : 'built'} copy did not always run ${ranFromSources ? 'the sources' : 'its build'}`);
    }
    printTable([`medians: shard ${PROCESS_ROUNDS} starts, up ${UP_ROUNDS}`, 'sources through tsx', 'built (dist/)', 'built ÷ tsx'], [
      ...rows('a shard until it listens', shard),
      ...rows('`up --shards 2` until ready (5 processes)', up),
    ]);
  } finally {
    source.remove();
    built.remove();
  }
}
