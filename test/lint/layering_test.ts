import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import { forbiddenRules, importCycles, layerRules, type ImportEdge } from './layer_rules.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface CruisedModule {
  source: string;
  dependencies: { resolved: string; dependencyTypes: string[] }[];
}

// What in `dir`/src breaks its READMEs' rules, as "from -> to (rule)", and its import cycles.
async function violations(dir: string): Promise<string[]> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const result = await cruise(['src'], {
      validate: true,
      ruleSet: { forbidden: forbiddenRules(layerRules(path.join(dir, 'src'))) },
      tsPreCompilationDeps: true,
      doNotFollow: { path: 'node_modules' },
      exclude: { path: '^(node_modules|test|bench)/' },
    } as never, undefined, { tsConfig: { fileName: path.join(ROOT, 'tsconfig.json') } } as never);
    const output = result.output as { modules: CruisedModule[]; summary: { violations: { from: string; to: string; rule: { name: string } }[] } };
    const edges: ImportEdge[] = output.modules
      .filter((m) => m.source.startsWith('src/') && !m.source.endsWith('_test.ts'))
      .flatMap((m) => m.dependencies.filter((d) => d.resolved.startsWith('src/')).map((d) => ({
        from: m.source,
        to: d.resolved,
        typeOnly: d.dependencyTypes.includes('type-only'),
      })));
    return [...output.summary.violations.map((v) => `${v.from} -> ${v.to} (${v.rule.name})`).sort(), ...importCycles(edges)];
  } finally {
    process.chdir(cwd);
  }
}

// A tree of files under a temporary directory, for the check to run on.
function plantedTree(): { file(name: string, text: string): void; dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-layers-'));
  return {
    dir,
    file(name, text) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

test('every import in src/ keeps to the "May import" line of its folder\'s README, and no import makes a cycle', { timeout: 120_000 }, async () => {
  assert.deepEqual(await violations(ROOT), []);
});

test('an import the README does not allow is reported; tests may import anything', { timeout: 60_000 }, async () => {
  const tree = plantedTree();
  try {
    tree.file('src/low/README.md', '# low\n\nMay import: nothing of ours.\n');
    tree.file('src/low/a.ts', "import { b } from '../high/b.js';\nexport const a = b;\n");
    tree.file('src/low/a_test.ts', "import { b } from '../high/b.js';\nexport const t = b;\n");
    tree.file('src/high/README.md', '# high\n\nMay import: `low`.\n');
    tree.file('src/high/b.ts', 'export const b = 1;\n');
    assert.deepEqual(await violations(tree.dir), ['src/low/a.ts -> src/high/b.ts (src/low may import nothing of ours)']);
  } finally {
    tree.remove();
  }
});

test('the router importing mongod_commands is reported, even where its README allowed everything; no README may allow it', { timeout: 60_000 }, async () => {
  const tree = plantedTree();
  try {
    tree.file('src/mongod_commands/README.md', '# mongod_commands\n\nMay import: nothing of ours.\n');
    tree.file('src/mongod_commands/dispatcher.ts', 'export const dispatch = 1;\n');
    tree.file('src/router/README.md', '# router\n\nMay import: everything in `src/`.\n');
    tree.file('src/router/router_dispatcher.ts', "import { dispatch } from '../mongod_commands/dispatcher.js';\nexport const route = dispatch;\n");
    tree.file('src/router/router_dispatcher_test.ts', "import { dispatch } from '../mongod_commands/dispatcher.js';\nexport const t = dispatch;\n");
    assert.deepEqual(await violations(tree.dir), ['src/router/router_dispatcher.ts -> src/mongod_commands/dispatcher.ts (src/router never imports mongod_commands)']);
    tree.file('src/router/README.md', '# router\n\nMay import: `mongod_commands`.\n');
    assert.throws(() => layerRules(path.join(tree.dir, 'src')), /src\/router\/README.md may import `mongod_commands`, which src\/router must never import/);
  } finally {
    tree.remove();
  }
});

test('an adapter imported past its port is reported, from a test too; its port and the composition roots may import it', { timeout: 60_000 }, async () => {
  const tree = plantedTree();
  try {
    tree.file('src/storage/README.md', '# storage\n\nMay import: nothing of ours.\n');
    tree.file('src/storage/lmdb/kv_store.ts', 'export class KvStore {}\n');
    tree.file('src/storage/storage_engine.ts', "import { KvStore } from './lmdb/kv_store.js';\nexport const engine = new KvStore();\n");
    tree.file('src/process/README.md', '# process\n\nMay import: everything in `src/`.\n');
    tree.file('src/process/root.ts', "import { KvStore } from '../storage/lmdb/kv_store.js';\nexport const root = new KvStore();\n");
    tree.file('src/commands/README.md', '# commands\n\nMay import: `storage`.\n');
    tree.file('src/commands/dispatcher.ts', "import { KvStore } from '../storage/lmdb/kv_store.js';\nexport const d = new KvStore();\n");
    tree.file('src/commands/dispatcher_test.ts', "import { KvStore } from '../storage/lmdb/kv_store.js';\nexport const t = new KvStore();\n");
    tree.file('src/commands/ported.ts', "import { engine } from '../storage/storage_engine.js';\nexport const p = engine;\n");
    assert.deepEqual(await violations(tree.dir), [
      'src/commands/dispatcher.ts -> src/storage/lmdb/kv_store.ts (src/storage/lmdb is imported only from src/storage, src/process)',
      'src/commands/dispatcher_test.ts -> src/storage/lmdb/kv_store.ts (src/storage/lmdb is imported only from src/storage, src/process)',
    ]);
  } finally {
    tree.remove();
  }
});

test('a cycle between folders is reported, type-only imports included; between files, a cycle of loaded imports', { timeout: 60_000 }, async () => {
  const tree = plantedTree();
  try {
    tree.file('src/one/README.md', '# one\n\nMay import: `two`.\n');
    tree.file('src/two/README.md', '# two\n\nMay import: `one`.\n');
    tree.file('src/one/a.ts', "import type { B } from '../two/b.js';\nexport type A = B;\n");
    tree.file('src/two/b.ts', "import { c } from '../one/c.js';\nexport type B = typeof c;\n");
    tree.file('src/one/c.ts', 'export const c = 1;\n');
    tree.file('src/one/d.ts', "import { e } from './e.js';\nexport const d = (): number => e();\n");
    tree.file('src/one/e.ts', "import { d } from './d.js';\nexport const e = (): number => d();\n");
    tree.file('src/one/f.ts', "import type { G } from './g.js';\nexport interface F { g?: G }\n");
    tree.file('src/one/g.ts', "import type { F } from './f.js';\nexport interface G { f?: F }\n");
    assert.deepEqual(await violations(tree.dir), [
      'folders: one -> two -> one',
      'files: src/one/d.ts -> src/one/e.ts -> src/one/d.ts',
    ]);
  } finally {
    tree.remove();
  }
});

test('a permission narrowed in parentheses holds: what it covers, and from where', { timeout: 60_000 }, async () => {
  const tree = plantedTree();
  try {
    tree.file('src/low/README.md', '# low\n\nMay import: nothing of ours.\n');
    tree.file('src/low/pure.ts', 'export const pure = 1;\n');
    tree.file('src/low/parts/deep.ts', 'export const deep = 1;\n');
    tree.file('src/low/io.ts', 'export const io = 1;\n');
    tree.file('src/high/README.md', '# high\n\nMay import: `low` (its pure parts: `pure.ts` and `parts/`, from `exec/` only).\n');
    tree.file('src/high/exec/run.ts', "import { pure } from '../../low/pure.js';\nimport { deep } from '../../low/parts/deep.js';\nexport const run = pure + deep;\n");
    tree.file('src/high/exec/bad.ts', "import { io } from '../../low/io.js';\nexport const bad = io;\n");
    tree.file('src/high/plan.ts', "import { pure } from '../low/pure.js';\nexport const plan = pure;\n");
    tree.file('src/high/plan_test.ts', "import { io } from '../low/io.js';\nexport const t = io;\n");
    assert.deepEqual(await violations(tree.dir), [
      'src/high/exec/bad.ts -> src/low/io.ts (src/high may import of src/low only pure.ts, parts/)',
      'src/high/plan.ts -> src/low/pure.ts (src/high may import src/low only from exec/)',
    ]);
  } finally {
    tree.remove();
  }
});

test('a README that limits a permission in words the check cannot hold, or names what is not there, is refused', () => {
  const tree = plantedTree();
  try {
    tree.file('src/low/README.md', '# low\n\nMay import: nothing of ours.\n');
    tree.file('src/low/a.ts', 'export const a = 1;\n');
    tree.file('src/high/README.md', '# high\n\nMay import: `low` (pure parts).\n');
    assert.throws(() => layerRules(path.join(tree.dir, 'src')), /limits `low` in words the layering check cannot hold: \(pure parts\)/);
    tree.file('src/high/README.md', '# high\n\nMay import: `low` (`b.ts`).\n');
    assert.throws(() => layerRules(path.join(tree.dir, 'src')), /narrows `low` to `b.ts`, which is not in src\/low/);
  } finally {
    tree.remove();
  }
});

test('the rules come from the READMEs: parentheses narrow, "everything" allows all', () => {
  const rules = layerRules(path.join(ROOT, 'src'));
  assert.deepEqual(rules.find((r) => r.folder === 'base')?.mayImport, []);
  assert.equal(rules.find((r) => r.folder === 'process')?.mayImport, undefined);
  assert.ok(rules.find((r) => r.folder === 'router')?.mayImport?.includes('command_layer'));
  assert.ok(!rules.find((r) => r.folder === 'router')?.mayImport?.includes('mongod_commands'));
});
