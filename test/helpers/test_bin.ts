import { mkdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

// bin/docshard.js loads the sources through tsx: about 1.3 s of CPU before a node listens, and the
// tests start hundreds of nodes, many of them again after a kill -9. They start this instead: the
// same sources bundled by esbuild (the transpiler tsx uses), once per test process. Each module's
// import.meta.url stays its source file's, so what a module finds next to it (the console's static
// files, bin/docshard.js for `docshard up`'s children) is found as from the sources. The bundle
// lives under the repository's node_modules, where its package imports resolve.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const sourceImportMetaUrl: Plugin = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

const SOURCE_BIN = path.join(ROOT, 'bin', 'docshard.js');

let bundled: Promise<string> | undefined;
let fromSources = false;

// Benchmarks measure docshard as `docshard up` runs it, through tsx (docs/benchmarks.md): bench/run.ts
// asks for bin/docshard.js before it starts anything.
export function spawnFromSources(): void {
  fromSources = true;
}

export function docshardTestBin(): Promise<string> {
  if (fromSources) return Promise.resolve(SOURCE_BIN);
  bundled ??= bundle();
  return bundled;
}

async function bundle(): Promise<string> {
  const dir = path.join(ROOT, 'node_modules', '.cache', 'docshard-test-bin', `${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const outfile = path.join(dir, 'docshard.mjs');
  await build({
    stdin: { contents: "import { main } from './src/process/cli.ts';\nawait main(process.argv.slice(2));\n", resolveDir: ROOT, sourcefile: 'docshard-test-bin.ts', loader: 'ts' },
    bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile, logLevel: 'warning', plugins: [sourceImportMetaUrl],
  });
  return outfile;
}
