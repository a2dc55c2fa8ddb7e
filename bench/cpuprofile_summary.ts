// Where a process's CPU went, from a V8 .cpuprofile (`node --cpu-prof`): self time by function and
// by file, as Markdown tables. A sample's time is its node's own (self) time; a file's is the sum
// of its functions'. `(idle)` is time the process waited, so shares are of its busy time: every
// sample but `(idle)`. Usage:
//   node --import tsx bench/cpuprofile_summary.ts <file.cpuprofile> [top functions, default 30]
// `npm run bench -- router-profile` writes such files for the router and prints this for each; it
// leaves beside each the stretch it loaded (<file>.load.json), which this then summarises alone.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable } from './table.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  startTime: number;
  endTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// A file as a reader looks for it: the repository's own by their path (src/router/x.ts), a
// package by its name, Node's own modules as they are named, V8's pseudo-frames by theirs. A frame
// in a build (dist/docshard.mjs, what bin/docshard.js runs while it is current) is named by the
// source file its line came from.
function fileOf(url: string, functionName: string, lineNumber: number): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return `package ${pkg[1]!}`;
  if (file.endsWith(path.join('dist', 'docshard.mjs'))) return bundledSourceOf(file, lineNumber);
  if (file.startsWith(ROOT)) return path.relative(ROOT, file);
  // Another checkout's (a baseline's) by the same names as this one's.
  const own = /\/(src\/.+)$/.exec(file);
  return own ? own[1]! : file;
}

// esbuild heads each module's code in a bundle with a comment naming its file (`// src/wire/client.ts`):
// the first line of each, in order, read once per bundle.
const bundles = new Map<string, { line: number; source: string }[]>();

function bundledSourceOf(bundle: string, lineNumber: number): string {
  let starts = bundles.get(bundle);
  if (starts === undefined) {
    starts = [];
    const lines = existsSync(bundle) ? readFileSync(bundle, 'utf8').split('\n') : [];
    lines.forEach((l, i) => {
      const m = /^\/\/ (src\/\S+\.ts)$/.exec(l);
      if (m) starts!.push({ line: i, source: m[1]! });
    });
    bundles.set(bundle, starts);
  }
  let found = 'dist/docshard.mjs';
  for (const s of starts) {
    if (s.line > lineNumber) break;
    found = s.source;
  }
  return found;
}

interface Summary {
  busyUs: number;
  idleUs: number;
  functions: Map<string, number>;
  files: Map<string, number>;
  // The repository's own functions by total time: their own and that of everything they called.
  totals: Map<string, number>;
  areas: Map<string, number>;
}

const SOCKET_WRITES = 'socket writes (Socket.write down to the kernel)';
const NODE_ELSE = 'Node outside the repository: socket reads, streams, timers, promise jobs';

// The suspects of issue 36 and the rest of a request, by the repository file nearest the top of a
// sample's stack (what it called into, packages and Node's builtins included, counts as its own).
const AREAS: [RegExp, string][] = [
  [/^src\/sessions\/(logical_time_metadata|logical_clock)\.ts$/, 'cluster time, in and out'],
  [/^src\/(metrics\/|process\/observability\.ts)/, 'metrics and the slow-operation log'],
  [/^src\/router\/router_operations\.ts$/, 'operation registry (killOp, $currentOp)'],
  [/^src\/console\//, "console's heat map"],
  [/^src\/(sessions\/|router\/cluster_session_operation\.ts)/, 'sessions'],
  [/^src\/router\/(fast_paths|\w+_fast_path|received_command|routed_command|raw_reply|raw_elements|received_inserts)\.ts$/, 'fast paths: reading the request, writing the reply'],
  [/^src\/router\/(command_entry|router_dispatcher)\.ts$/, 'command entry and dispatcher'],
  [/^src\/router\/chunk_splitter\.ts$/, 'auto-split accounting'],
  [/^src\/router\/(chunk_manager|catalog_cache|targeter|shard_registry)\.ts$/, 'targeting'],
  [/^src\/router\//, 'general path: cluster commands, versioned requests'],
  [/^src\/bson\//, 'BSON decoding and encoding'],
  [/^src\/command_layer\//, 'command layer: message handler, fail points, arguments'],
  [/^src\/wire\//, 'wire: framing, connection pool, turn writer'],
];

// A function's place: its file and line, or in a build its source file and the build's line.
function frameName(url: string, file: string, lineNumber: number): string {
  return url.endsWith('dist/docshard.mjs') ? `${file} (dist:${lineNumber + 1})` : `${file}:${lineNumber + 1}`;
}

function areaOf(file: string): string {
  return AREAS.find(([re]) => re.test(file))?.[1] ?? `other: ${file.split('/').slice(0, 2).join('/')}`;
}

// `window`, in µs of the system's monotonic clock (the profile's, and `process.hrtime`'s), keeps
// only the samples taken within it: a measured stretch without the start-up and warm-up around it.
export function summarise(profile: CpuProfile, window?: { from: number; to: number }): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  const totals = new Map<string, number>();
  const areas = new Map<string, number>();
  let busyUs = 0;
  let idleUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    if (window !== undefined && (at < window.from || at > window.to)) continue;
    // The next sample's delta is the time since this one: the time spent where this one landed.
    const us = profile.timeDeltas[i + 1] ?? 0;
    const { functionName, url, lineNumber } = byId.get(profile.samples[i]!)!.callFrame;
    if (functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const file = fileOf(url, functionName, lineNumber);
    const fn = url === '' ? functionName : `${functionName || '(anonymous)'} ${frameName(url, file, lineNumber)}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
    files.set(file, (files.get(file) ?? 0) + us);
    // Each function once per sample, however deep it recursed.
    const onStack = new Set<string>();
    let area: string | undefined = url === '' && functionName.startsWith('(') ? functionName : undefined;
    for (let id: number | undefined = profile.samples[i]!; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (frame.functionName === 'writeGeneric' || frame.functionName === 'writevGeneric') area ??= SOCKET_WRITES;
      if (!frame.url.startsWith('file://')) continue;
      const frameFile = fileOf(frame.url, frame.functionName, frame.lineNumber);
      if (!frameFile.startsWith('src/')) continue;
      area ??= areaOf(frameFile);
      onStack.add(`${frame.functionName || '(anonymous)'} ${frameName(frame.url, frameFile, frame.lineNumber)}`);
    }
    area ??= NODE_ELSE;
    areas.set(area, (areas.get(area) ?? 0) + us);
    for (const name of onStack) totals.set(name, (totals.get(name) ?? 0) + us);
  }
  return { busyUs, idleUs, functions, files, totals, areas };
}

// `load`, when known, gives each share in µs per request: of the main thread's busy time, which
// is wall time (a function the thread was descheduled in, such as a socket write that wakes its
// peer on the same core, gathers time it did not spend on a busy machine). The process's own CPU
// time over the same stretch (from /proc) is printed beside it; it counts every thread, the
// profiler's sampling included, so only the shares compare across runs.
export function printSummary(summary: Summary, top = 30, load?: { requests: number; cpuUs: number }): void {
  const rows = (m: Map<string, number>, n: number): string[][] => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => [
    name, `${((100 * us) / summary.busyUs).toFixed(1)}%`, load === undefined ? '' : `${(us / load.requests).toFixed(1)} µs`,
  ]);
  const head = load === undefined ? '' : `, ${load.requests} requests: ${(summary.busyUs / load.requests).toFixed(1)} µs busy each (process CPU ${(load.cpuUs / load.requests).toFixed(1)} µs, profiler included)`;
  process.stdout.write(`busy ${(summary.busyUs / 1e6).toFixed(2)} s, idle ${(summary.idleUs / 1e6).toFixed(2)} s${head}\n\n`);
  printTable(['by area (the repository file nearest the top of the stack)', 'share of busy', 'per request'], rows(summary.areas, 40));
  process.stdout.write('\n');
  printTable([`self time by function (top ${top})`, 'share of busy', 'per request'], rows(summary.functions, top));
  process.stdout.write('\n');
  printTable(['self time by file', 'share of busy', 'per request'], rows(summary.files, 40));
  process.stdout.write('\n');
  printTable([`total time (self and callees) of src/ functions (top ${top})`, 'share of busy', 'per request'], rows(summary.totals, top));
}

// Beside a profile router_profile.ts wrote: the loaded stretch and what it served, so that the
// summary can be printed again from the files alone.
export interface ProfileLoad {
  window: { from: number; to: number };
  requests: number;
  cpuUs: number;
}

export function loadFileOf(profileFile: string): string {
  return `${profileFile}.load.json`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: cpuprofile_summary.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const load = existsSync(loadFileOf(file)) ? JSON.parse(readFileSync(loadFileOf(file), 'utf8')) as ProfileLoad : undefined;
  printSummary(summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, load?.window), Number(process.argv[3] ?? 30), load);
}
