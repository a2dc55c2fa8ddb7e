import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { DependencyGraph } from '../helpers/dependency_cycles.js';

// The import rules the folders of src/ write down: each README has a line
//   May import: `base`, `bson` (`values.ts`, `format.ts`), `storage` (`storage_engine.ts`, from `exec/`), ...
// naming the folders of src/ its code may import ("nothing of ours", or "everything in `src/`").
// A permission may be narrowed by a parenthesis right after it, which names in backticks what it
// covers: files and subfolders (`agg/`) of the folder imported, and, after the word "from", the
// files and subfolders of the importing folder that may use it. Words around them say why; a
// parenthesis that names nothing is refused, so that no README states a limit the check does not
// hold.
export interface Permission {
  readonly folder: string;
  // Paths in the imported folder the permission covers; undefined: all of it.
  readonly only?: readonly string[];
  // Paths in the importing folder that may use it; undefined: all of it.
  readonly from?: readonly string[];
}

export interface LayerRule {
  readonly folder: string;
  // undefined: everything.
  readonly mayImport: readonly string[] | undefined;
  readonly permissions: readonly Permission[];
}

// Imports no README may allow, whatever it says: the router's commands and mongod's are siblings
// over the command layer, and the command layer is below both.
export const NEVER: Readonly<Record<string, readonly string[]>> = {
  router: ['mongod_commands'],
  command_layer: ['mongod_commands', 'router'],
};

// Adapters, each reached only through its port: from the folder that defines the port and from the
// composition roots that open the adapter (tests included, so that none reaches past a port either).
export const ADAPTERS: Readonly<Record<string, readonly string[]>> = {
  'storage/lmdb': ['storage', 'process'],
};

export function layerRules(srcDir: string): LayerRule[] {
  const folders = readdirSync(srcDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  return folders.map((folder) => {
    const readme = path.join(srcDir, folder, 'README.md');
    if (!existsSync(readme)) throw new Error(`src/${folder} has no README.md`);
    const text = readFileSync(readme, 'utf8');
    const at = text.search(/^May import:/m);
    if (at < 0) throw new Error(`src/${folder}/README.md has no "May import:" line`);
    // The sentence runs to the first full stop outside parentheses, over as many lines as it takes.
    const sentence = firstSentence(text.slice(at + 'May import:'.length)).replace(/\s+/g, ' ');
    if (/everything in `src\/`/.test(sentence)) return { folder, mayImport: undefined, permissions: [] };
    const permissions = parsePermissions(folder, sentence);
    for (const p of permissions) {
      if (!folders.includes(p.folder)) throw new Error(`src/${folder}/README.md may import \`${p.folder}\`, which is not a folder of src/`);
      if (NEVER[folder]?.includes(p.folder)) throw new Error(`src/${folder}/README.md may import \`${p.folder}\`, which src/${folder} must never import`);
      for (const only of p.only ?? []) if (!existsSync(path.join(srcDir, p.folder, only))) throw new Error(`src/${folder}/README.md narrows \`${p.folder}\` to \`${only}\`, which is not in src/${p.folder}`);
      for (const from of p.from ?? []) if (!existsSync(path.join(srcDir, folder, from))) throw new Error(`src/${folder}/README.md lets \`${from}\` import \`${p.folder}\`, but it is not in src/${folder}`);
    }
    return { folder, mayImport: permissions.map((p) => p.folder), permissions };
  });
}

function firstSentence(text: string): string {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '.' && depth === 0 && (i + 1 === text.length || /\s/.test(text[i + 1]!))) return text.slice(0, i);
  }
  return text;
}

// The top-level names in backticks, each with the parenthesis that follows it, if any.
function parsePermissions(folder: string, sentence: string): Permission[] {
  const permissions: Permission[] = [];
  let i = 0;
  while (i < sentence.length) {
    const c = sentence[i]!;
    if (c === '(') throw new Error(`src/${folder}/README.md: a parenthesis in its May import line follows no permission: ${sentence}`);
    if (c !== '`') { i++; continue; }
    const end = sentence.indexOf('`', i + 1);
    const name = sentence.slice(i + 1, end);
    i = end + 1;
    const rest = sentence.slice(i);
    const open = /^\s*\(/.exec(rest);
    if (open === null) { permissions.push({ folder: name }); continue; }
    let depth = 0;
    let j = i + open[0].length - 1;
    for (; j < sentence.length; j++) {
      if (sentence[j] === '(') depth++;
      else if (sentence[j] === ')' && --depth === 0) break;
    }
    const limit = sentence.slice(i + open[0].length, j);
    i = j + 1;
    const fromAt = limit.search(/\bfrom\b/);
    const paths = (s: string) => [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const only = paths(fromAt < 0 ? limit : limit.slice(0, fromAt));
    const from = fromAt < 0 ? [] : paths(limit.slice(fromAt));
    if (only.length === 0 && from.length === 0) {
      throw new Error(`src/${folder}/README.md limits \`${name}\` in words the layering check cannot hold: (${limit}); name the files or subfolders it covers in backticks, or drop the limit`);
    }
    permissions.push({ folder: name, ...(only.length > 0 ? { only } : {}), ...(from.length > 0 ? { from } : {}) });
  }
  return permissions;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// A file, or everything under a subfolder (written with a trailing slash).
const pathsPattern = (folder: string, paths: readonly string[]): string =>
  `^src/${escape(folder)}/(${paths.map((p) => (p.endsWith('/') ? escape(p) : `${escape(p)}$`)).join('|')})`;

// dependency-cruiser's forbidden rules for them: nothing of src/ outside a folder's own and the
// ones it may import, and of a narrowed permission nothing outside what it covers, from nowhere
// else than where it allows. Tests (`*_test.ts`) may import anything, but what NEVER forbids.
export function forbiddenRules(rules: readonly LayerRule[]): object[] {
  const forbidden: object[] = [];
  for (const r of rules) {
    if (r.mayImport !== undefined) {
      forbidden.push({
        name: `src/${r.folder} may import ${r.mayImport.length === 0 ? 'nothing of ours' : r.mayImport.join(', ')}`,
        severity: 'error',
        from: { path: `^src/${r.folder}/`, pathNot: '_test\\.ts$' },
        to: { path: '^src/', pathNot: `^src/(${[r.folder, ...r.mayImport].join('|')})/` },
      });
    }
    for (const p of r.permissions) {
      if (p.only !== undefined) {
        forbidden.push({
          name: `src/${r.folder} may import of src/${p.folder} only ${p.only.join(', ')}`,
          severity: 'error',
          from: { path: `^src/${r.folder}/`, pathNot: '_test\\.ts$' },
          to: { path: `^src/${p.folder}/`, pathNot: pathsPattern(p.folder, p.only) },
        });
      }
      if (p.from !== undefined) {
        forbidden.push({
          name: `src/${r.folder} may import src/${p.folder} only from ${p.from.join(', ')}`,
          severity: 'error',
          from: { path: `^src/${r.folder}/`, pathNot: `(${pathsPattern(r.folder, p.from)})|(_test\\.ts$)` },
          to: { path: `^src/${p.folder}/` },
        });
      }
    }
  }
  for (const [folder, never] of Object.entries(NEVER)) {
    forbidden.push({
      name: `src/${folder} never imports ${never.join(' or ')}`,
      severity: 'error',
      from: { path: `^src/${folder}/`, pathNot: '_test\\.ts$' },
      to: { path: `^src/(${never.join('|')})/` },
    });
  }
  for (const [adapter, owners] of Object.entries(ADAPTERS)) {
    forbidden.push({
      name: `src/${adapter} is imported only from src/${owners.join(', src/')}`,
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(${owners.join('|')})/` },
      to: { path: `^src/${escape(adapter)}/` },
    });
  }
  return forbidden;
}

export interface ImportEdge {
  readonly from: string;
  readonly to: string;
  // Only `import type`: erased when compiled, so it orders no module's loading.
  readonly typeOnly: boolean;
}

// The import cycles among files of src/, as "a -> b -> ... -> a", each told from its first file in
// order: between folders (every import counts, so that the folders stay layered), and between
// files through imports that are loaded (a cycle through an `import type` is not one there).
export function importCycles(edges: readonly ImportEdge[]): string[] {
  const folderOf = (file: string): string => file.split('/')[1]!;
  const folderEdges = edges.filter((e) => folderOf(e.from) !== folderOf(e.to)).map((e) => [folderOf(e.from), folderOf(e.to)] as const);
  const fileEdges = edges.filter((e) => !e.typeOnly).map((e) => [e.from, e.to] as const);
  return [
    ...cyclesOf(folderEdges).map((c) => `folders: ${c.join(' -> ')}`),
    ...cyclesOf(fileEdges).map((c) => `files: ${c.join(' -> ')}`),
  ];
}

// One cycle per strongly connected component of more than one node, the shortest, told from its
// first name: found as test/helpers/dependency_cycles.ts finds a G0 cycle among transactions, an
// import standing for a write-write dependency.
function cyclesOf(edges: ReadonlyArray<readonly [string, string]>): string[][] {
  const names = [...new Set(edges.flat())].sort();
  const numbers = new Map(names.map((name, i) => [name, i]));
  const graph = new DependencyGraph<undefined>();
  for (const [a, b] of edges) graph.add(numbers.get(a)!, numbers.get(b)!, 'ww', undefined);
  return graph.cycles().map((cycle) => [...cycle.edges.map((e) => names[e.from]!), names[cycle.edges[0]!.from]!]);
}
