import { mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

// docshard as one JavaScript module: the sources bundled by esbuild (the transpiler tsx uses), so a
// process starts without transpiling them: over a second less CPU. Packages stay outside the bundle,
// imported from node_modules as they are: lmdb and snappy load native code, uplot's files are
// served as shipped, pino starts workers by file name.

// What bin/docshard.js reads to tell whether the bundle is current: when the build began, and
// every file it read (relative to the root). A file changed since is newer than `builtAt`.
interface BuildManifest {
  builtAt: number;
  inputs: string[];
}

const MANIFEST_NAME = 'build.json';
const BUNDLE_NAME = 'docshard.mjs';

const THIS_FILE = fileURLToPath(import.meta.url);
const ENTRY_NAME = 'docshard-entry.ts';

// Each module's import.meta.url stays its source file's, written relative to the bundle's real
// folder so that the tree can move: what a module finds next to it (the console's static files, bin/docshard.js for
// `docshard up`'s children, packages resolved from its folder) is found as from the sources.
function sourceImportMetaUrl(outdir: string): Plugin {
  return {
    name: 'source-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        const relative = path.relative(outdir, args.path).split(path.sep).join('/');
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`), loader: 'ts' };
      });
    },
  };
}

// Bundles the docshard tree at `root` into `outdir`/docshard.mjs, which runs the command line when
// imported, and writes its manifest; returns the bundle's path. The bundle is renamed into place,
// so a process starting meanwhile loads the old one or the new one, whole.
export async function bundleDocshard(root: string, outdir: string): Promise<string> {
  const builtAt = Date.now();
  mkdirSync(outdir, { recursive: true });
  const outfile = path.join(outdir, BUNDLE_NAME);
  // Node runs a module from its real path, through any symbolic link (a linked node_modules).
  const realOutdir = realpathSync(outdir);
  const partial = `${outfile}.${process.pid}.partial`;
  const result = await build({
    stdin: { contents: "import { main } from './src/process/cli.ts';\nawait main(process.argv.slice(2));\n", resolveDir: root, sourcefile: ENTRY_NAME, loader: 'ts' },
    absWorkingDir: root, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external',
    outfile: partial, metafile: true, logLevel: 'warning', plugins: [sourceImportMetaUrl(realOutdir)],
  });
  renameSync(partial, outfile);
  const inputs = Object.keys(result.metafile.inputs).filter((input) => input !== ENTRY_NAME);
  const builder = path.relative(root, THIS_FILE);
  if (!builder.startsWith('..')) inputs.push(builder.split(path.sep).join('/'));
  const manifest: BuildManifest = { builtAt, inputs: [...inputs, 'tsconfig.json'] };
  writeFileSync(path.join(outdir, MANIFEST_NAME), `${JSON.stringify(manifest)}\n`);
  return outfile;
}
