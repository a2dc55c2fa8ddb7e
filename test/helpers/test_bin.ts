import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDocshard } from '../../build/bundle.js';

// The tests start hundreds of nodes, many of them again after a kill -9, and start them from the
// sources as they are now: bundled by the build step `npm run build` uses, whether or not dist/ is
// current. test/runner/run.ts bundles them once for the whole run and names the bundle in
// DOCSHARD_TEST_BIN (a bundle costs a test process a few seconds); a test process started
// otherwise bundles them itself, once. The bundle lives under the repository's node_modules, where
// its package imports resolve.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const BIN = path.join(ROOT, 'bin', 'docshard.js');

let bundled: Promise<string> | undefined;
let throughBin = false;

// Benchmarks measure docshard as `docshard up` runs it, through bin/docshard.js (docs/benchmarks.md):
// bench/run.ts asks for it before it starts anything.
export function spawnThroughBin(): void {
  throughBin = true;
}

export function docshardTestBin(): Promise<string> {
  if (throughBin) return Promise.resolve(BIN);
  const shared = process.env.DOCSHARD_TEST_BIN;
  bundled ??= shared === undefined || shared === '' ? bundle() : Promise.resolve(shared);
  return bundled;
}

function bundle(): Promise<string> {
  const dir = path.join(ROOT, 'node_modules', '.cache', 'docshard-test-bin', `${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return bundleDocshard(ROOT, dir);
}
