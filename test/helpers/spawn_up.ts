import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/docshard.js');

export interface Up {
  child: ChildProcess;
  uri: string;
  // The router's console (and its /metrics).
  consoleUrl: string;
  // Each child's /metrics, by its name (config, shard0, ..., router), from the "Started" lines.
  metricsUrls: Map<string, string>;
  // Everything it wrote until it was ready, stdout's lines and stderr.
  output: string[];
  exited: Promise<number | null>;
}

// Starts `docshard up` (the README's first command) on an ephemeral router port and waits for its
// "Cluster ready" JSON line. `bin`: another tree's bin/docshard.js.
export async function startUp(dir: string, shards: number, flags: string[] = [], bin = BIN): Promise<Up> {
  const child = spawn(process.execPath, [bin, 'up', '--shards', String(shards), '--port', '0', '--dir', dir, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output: string[] = [];
  const metricsUrls = new Map<string, string>();
  child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  const ready = await new Promise<{ uri: string; consoleUrl: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`up did not get ready:\n${output.join('')}`));
    }, 90_000);
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        output.push(`${line}\n`);
        if (line.includes('"Started"')) {
          const started = JSON.parse(line) as { child: string; metrics?: string };
          if (started.metrics !== undefined) metricsUrls.set(started.child, started.metrics);
        }
        if (!line.includes('"Cluster ready"')) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line) as { uri: string; consoleUrl: string });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`up exited with ${code}:\n${output.join('')}`));
    });
  });
  return { child, uri: ready.uri, consoleUrl: ready.consoleUrl, metricsUrls, output, exited };
}

// Stops `up` with SIGTERM, as Ctrl-C does, unless it has already exited; for a suite's after().
export async function stopUp(up: Up | undefined): Promise<void> {
  if (up === undefined || up.child.exitCode !== null || up.child.signalCode !== null) return;
  up.child.kill('SIGTERM');
  await up.exited;
}
