import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';

// The import rules the folders of src/ write down: each README has a line
//   May import: `base`, `bson` (what for), ...
// naming the folders of src/ its code may import ("nothing of ours", or "everything in `src/`").
// A parenthesised qualifier narrows a permission for the reader; the check is per folder.
export interface LayerRule {
  readonly folder: string;
  // undefined: everything.
  readonly mayImport: readonly string[] | undefined;
}

export function layerRules(srcDir: string): LayerRule[] {
  const folders = readdirSync(srcDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  return folders.map((folder) => {
    const readme = path.join(srcDir, folder, 'README.md');
    if (!existsSync(readme)) throw new Error(`src/${folder} has no README.md`);
    const text = readFileSync(readme, 'utf8');
    const at = text.search(/^May import:/m);
    if (at < 0) throw new Error(`src/${folder}/README.md has no "May import:" line`);
    // The sentence runs to the first full stop, over as many lines as it takes.
    const sentence = text.slice(at + 'May import:'.length).split(/\.(\s|$)/)[0]!.replace(/\s+/g, ' ');
    if (/everything in `src\/`/.test(sentence)) return { folder, mayImport: undefined };
    // Names in parentheses qualify a permission; only the top-level names grant one.
    const topLevel = sentence.replace(/\([^)]*\)/g, '');
    const mayImport = [...topLevel.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    for (const name of mayImport) if (!folders.includes(name)) throw new Error(`src/${folder}/README.md may import \`${name}\`, which is not a folder of src/`);
    return { folder, mayImport };
  });
}

// dependency-cruiser's forbidden rules for them: nothing of src/ outside a folder's own and the
// ones it may import. Tests (`*_test.ts`) may import anything.
export function forbiddenRules(rules: readonly LayerRule[]): object[] {
  return rules.filter((r) => r.mayImport !== undefined).map((r) => ({
    name: `src/${r.folder} may import ${r.mayImport!.length === 0 ? 'nothing of ours' : r.mayImport!.join(', ')}`,
    severity: 'error',
    from: { path: `^src/${r.folder}/`, pathNot: '_test\\.ts$' },
    to: { path: '^src/', pathNot: `^src/(${[r.folder, ...r.mayImport!].join('|')})/` },
  }));
}
