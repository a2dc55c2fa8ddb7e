import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface DocshardTree {
  dir: string;
  bin: string;
  remove(): void;
}

// A copy of this checkout as an installed docshard runs it (bin/, src/, package.json,
// tsconfig.json, its node_modules linked), without dist/: a test or a benchmark may build it,
// change its sources and start its bin/docshard.js without touching the checkout's.
export function copyDocshardTree(): DocshardTree {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-tree-'));
  for (const entry of ['bin', 'src', 'package.json', 'tsconfig.json']) cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { dir, bin: path.join(dir, 'bin', 'docshard.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
