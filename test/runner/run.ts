import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDocshard } from '../../build/bundle.js';
import { writeJsTree } from './js_tree.js';
import { runOrder } from './run_order.js';

// npm test and its tiers: `node --import tsx test/runner/run.ts [--node-option...] x_test.ts...`
// transpiles the sources and tests into a fresh JavaScript tree (js_tree.ts) and bundles docshard
// there once for every process the tests start (test/helpers/test_bin.ts), runs Node's test runner
// over the given test files' counterparts there, the longest first (run_order.ts), with the
// property tests' fixed seed, and removes the tree when the runner ends. Its exit code is the
// runner's.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Every folder whose TypeScript the tests import (test/helpers/test_bin.ts imports build/).
const TRANSPILED = ['src', 'test', 'build'];

// Under node_modules, where the transpiled files' package imports resolve; one tree per run.
const TREES = path.join(ROOT, 'node_modules', '.cache', 'docshard-tests');

const args = process.argv.slice(2);
const nodeOptions = args.filter((a) => a.startsWith('--'));
const testFiles = args.filter((a) => !a.startsWith('--'));

function counterpart(tree: string, file: string): string {
  const relative = path.relative(ROOT, path.resolve(file));
  if (!file.endsWith('.ts') || !TRANSPILED.some((dir) => relative.startsWith(`${dir}${path.sep}`))) {
    throw new Error(`${file} is not a TypeScript file under ${TRANSPILED.join('/, ')}/`);
  }
  return path.relative(ROOT, path.join(tree, relative)).replace(/\.ts$/, '.js');
}

mkdirSync(TREES, { recursive: true });
const tree = mkdtempSync(path.join(TREES, 'run-'));
const removeTree = (): void => rmSync(tree, { recursive: true, force: true });
let runner: ChildProcess | undefined;
// A terminal's ^C reaches the test runner too; a signal sent to this process alone is passed on.
// Either way the tree goes once the runner has ended, or at once while there is none yet.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (runner !== undefined) {
      runner.kill(signal);
      return;
    }
    removeTree();
    process.exit(128 + constants.signals[signal]);
  });
}
try {
  // Sources esbuild cannot bundle leave DOCSHARD_TEST_BIN unset: each test process then bundles
  // them itself and fails to start docshard with esbuild's error, as it did before.
  const [errors, bin] = await Promise.all([writeJsTree(ROOT, TRANSPILED, tree), bundleDocshard(ROOT, path.join(tree, 'docshard-bin')).catch(() => undefined)]);
  for (const error of errors) process.stderr.write(`${error}\n`);
  const files = runOrder(testFiles).map((file) => counterpart(tree, file));
  const seed = path.join(tree, 'test', 'helpers', 'property_seed.js');
  const env = bin === undefined ? process.env : { ...process.env, DOCSHARD_TEST_BIN: bin };
  runner = spawn(process.execPath, ['--enable-source-maps', '--import', seed, ...nodeOptions, '--test', ...files], { cwd: ROOT, stdio: 'inherit', env });
  runner.once('error', (err) => {
    removeTree();
    throw err;
  });
  runner.once('exit', (code, signal) => {
    removeTree();
    process.exitCode = code ?? 128 + (signal === null ? 0 : constants.signals[signal]);
  });
} catch (err) {
  removeTree();
  throw err;
}
