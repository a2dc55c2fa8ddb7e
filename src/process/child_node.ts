import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { supervisedSpawnOptions } from './supervisor_pipe.js';

// The program every role runs: children start exactly as a user would start them by hand.
export const DOCSHARD_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/docshard.js');

const LISTEN_MESSAGE = 'Waiting for connections';
const HTTP_MESSAGE = 'Serving HTTP';
const STOP_GRACE_MS = 15_000;

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildNode {
  name: string;
  // The port it listens on, once it says so; rejects if it exits first.
  ready: Promise<number>;
  // Its HTTP port (--httpPort), once it says so, when the spec expects one.
  httpReady: Promise<number>;
  // Settles once the process has exited, whoever stopped it.
  exited: Promise<ChildExit>;
  // SIGTERM, then SIGKILL if it is still running after the grace period.
  stop(): Promise<ChildExit>;
}

export interface ChildNodeSpec {
  name: string;
  args: string[]; // after the program: role and flags
  logFile: string; // stdout and stderr are appended here, never shown on the terminal
  bin?: string;
  // Started with --httpPort: httpReady waits for its "Serving HTTP" line.
  http?: boolean;
}

// Starts one docshard role as a child process. It is handed back at once, so that it can be
// stopped while it is still starting; `ready` gives the port from its "listening" log line (the
// only way to learn a port chosen with --port 0).
export function spawnChildNode(spec: ChildNodeSpec): ChildNode {
  // Its own process group: a Ctrl-C on the terminal reaches only `up`, which then stops the
  // children in order instead of all of them at once. The supervisor pipe ends it if `up` dies
  // without stopping it.
  const child = spawn(process.execPath, [spec.bin ?? DOCSHARD_BIN, ...spec.args], { ...supervisedSpawnOptions(), detached: true });
  const log = createWriteStream(spec.logFile, { flags: 'a' });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<ChildExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // Spawning itself failed (no exit event follows).
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  void exited.then(() => log.end());
  const notReady = (what: string) => exited.then(({ code, signal }) => {
    throw new Error(`${spec.name} exited (${signal ?? `code ${code}`}) before ${what}; see ${spec.logFile}`);
  });
  let foundPort: (port: number) => void;
  let foundHttpPort: (port: number) => void;
  const ready = Promise.race([new Promise<number>((resolve) => { foundPort = resolve; }), notReady('listening')]);
  const httpReady = Promise.race([new Promise<number>((resolve) => { foundHttpPort = resolve; }), notReady('serving HTTP')]);
  let waitingFor = spec.http === true ? 2 : 1;
  let pending = '';
  const onData = (chunk: Buffer): void => {
    pending += chunk.toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      const port = loggedPort(line, LISTEN_MESSAGE, 'port');
      const httpPort = loggedPort(line, HTTP_MESSAGE, 'httpPort');
      if (port !== undefined) foundPort(port);
      if (httpPort !== undefined) foundHttpPort(httpPort);
      if (port !== undefined || httpPort !== undefined) waitingFor -= 1;
      if (waitingFor === 0) {
        child.stdout!.off('data', onData);
        return;
      }
    }
  };
  child.stdout!.on('data', onData);
  // The cluster reads `exited` too; an unread rejection is not a crash.
  ready.catch(() => undefined);
  httpReady.catch(() => undefined);
  return { name: spec.name, ready, httpReady, exited, stop: () => stopChild(child, exited) };
}

// The `field` of a JSON log line whose message is `message`.
function loggedPort(line: string, message: string, field: string): number | undefined {
  if (!line.includes(message)) return undefined;
  try {
    const entry = JSON.parse(line) as Record<string, unknown>;
    const port = entry[field];
    return entry.msg === message && typeof port === 'number' ? port : undefined;
  } catch {
    return undefined; // not a JSON log line
  }
}

async function stopChild(child: ChildProcess, exited: Promise<ChildExit>): Promise<ChildExit> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  }
  return exited;
}
