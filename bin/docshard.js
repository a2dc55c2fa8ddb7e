#!/usr/bin/env node
// Runs dist/docshard.mjs, the sources bundled ahead of time (`npm run build`, which `npm install`
// runs), while no file it was built from has changed since; otherwise the TypeScript sources through
// tsx, which costs every process about a second more CPU before it listens.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');

// Whether dist/build.json (written by build/bundle.ts) names a build begun after the last change
// to every file it read. Its time is in whole milliseconds, a file's finer: a file written in the
// millisecond the build began, before it, counts as older.
function builtIsCurrent() {
  try {
    const { builtAt, inputs } = JSON.parse(readFileSync(path.join(DIST, 'build.json'), 'utf8'));
    return inputs.every((input) => Math.floor(statSync(path.join(ROOT, input), { throwIfNoEntry: false })?.mtimeMs) <= builtAt);
  } catch {
    return false; // no build, or not one this bin knows how to read
  }
}

if (builtIsCurrent()) {
  await import('../dist/docshard.mjs');
} else {
  process.stderr.write('docshard: dist/ is missing or older than the sources; running them through tsx (`npm run build` starts faster)\n');
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/process/cli.ts');
  await main(process.argv.slice(2));
}
