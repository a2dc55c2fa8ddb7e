import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { transform, type TransformOptions } from 'esbuild';

// The suite's TypeScript as JavaScript, file for file, so that its test processes start without
// tsx, whose loader costs each of them most of a second. Each file is transpiled alone, with the
// options tsx gives esbuild (the project's tsconfig, names kept, a source map), so the code that
// runs is the code tsx would run. A module's import.meta.url stays its source file's: what it finds
// beside it (fixtures, READMEs, bin/docshard.js, a .ts entry point it starts through tsx) it finds
// in the source tree, as under tsx; only its imports, written with .js as NodeNext has them, reach
// the transpiled files.

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return typeScriptFiles(full);
    return e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

// A file esbuild cannot read fails where tsx would fail it, in the processes that import it; its
// error is also returned, since an import of it fails first on the exports it lacks.
async function transpile(source: string, options: TransformOptions): Promise<{ code: string; error?: string }> {
  try {
    const result = await transform(readFileSync(source, 'utf8'), { ...options, sourcefile: source, define: { 'import.meta.url': JSON.stringify(pathToFileURL(source).href) } });
    return { code: result.code };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return { code: `throw new SyntaxError(${JSON.stringify(error)});\n`, error };
  }
}

// Writes every .ts file under `dirs` of `root` (but declarations) to `outdir` as .js, at the same
// relative path; returns the errors of those esbuild could not transpile.
export async function writeJsTree(root: string, dirs: readonly string[], outdir: string): Promise<string[]> {
  const options: TransformOptions = {
    loader: 'ts', format: 'esm', platform: 'node', target: `node${process.versions.node}`,
    tsconfigRaw: readFileSync(path.join(root, 'tsconfig.json'), 'utf8'),
    keepNames: true, sourcemap: 'inline', sourcesContent: false,
  };
  const sources = dirs.flatMap((dir) => typeScriptFiles(path.join(root, dir)));
  const errors = await Promise.all(sources.map(async (source) => {
    const { code, error } = await transpile(source, options);
    const target = path.join(outdir, path.relative(root, source)).replace(/\.ts$/, '.js');
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, code);
    return error;
  }));
  return errors.filter((e) => e !== undefined);
}
