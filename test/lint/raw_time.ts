import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Protocol code takes the time and its timers from the Clock it is given (src/base/clock.ts), so a
// simulator can run it on a virtual clock. Only the folders that own the edges read the process's
// own: the process (composition and startup: it hands `systemClock` to everything it builds), the
// wire (sockets), the storage engine's adapter to LMDB, and the clock itself. The console is not
// an edge: it owns no socket (its routes are served by src/metrics' HTTP server, which
// src/process starts), and its poll and the times it shows are the router's clock's. `systemClock` itself counts as a raw read outside the edges, or a component could take
// the process's clock without being given it. Tests and their support files are not protocol code.
// Nor is the shell prelude of server-side JavaScript: it is script text that runs inside the
// isolate, whose clock is its own (a script's new ObjectId() reads it, as in MongoDB).
export const EDGES: readonly string[] = ['src/process/', 'src/wire/', 'src/storage/lmdb/', 'src/base/clock.ts', 'src/query/js/shell_prelude.ts'];

const RAW = [
  { what: 'Date.now()', pattern: /\bDate\.now\b/g },
  { what: 'new Date()', pattern: /\bnew Date\(\s*\)/g },
  { what: 'setTimeout', pattern: /(?<![.\w])setTimeout\b(?!\s*:)/g },
  { what: 'setInterval', pattern: /(?<![.\w])setInterval\b(?!\s*:)/g },
  { what: 'node:timers', pattern: /['"](node:)?timers(\/promises)?['"]/g },
  { what: 'systemClock', pattern: /\bsystemClock\b/g },
];

const TEST_FILE = /(_test|test_support|_test_util|_cases)\.ts$/;

// Comments may name what they explain; only code counts. String contents are kept, as a template
// literal can hold code.
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

function sourceFiles(dir: string, root: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full, root);
    return e.name.endsWith('.ts') && !TEST_FILE.test(e.name) ? [path.relative(root, full).split(path.sep).join('/')] : [];
  });
}

// Every raw time read or timer in `root`/src outside the edges, as "file:line: what".
export function rawTimeUses(root: string): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(path.join(root, 'src'), root)) {
    if (EDGES.some((edge) => file === edge || file.startsWith(edge))) continue;
    const lines = withoutComments(readFileSync(path.join(root, file), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      for (const { what, pattern } of RAW) for (const _ of line.matchAll(pattern)) found.push(`${file}:${i + 1}: ${what}`);
    });
  }
  return found;
}
