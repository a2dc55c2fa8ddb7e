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

// Runs `check` on a tree of `files` under a temporary directory; `plant` adds or replaces one.
async function inTree(files: Record<string, string>, check: (dir: string, plant: (name: string, text: string) => void) => void | Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-layers-'));
  const plant = (name: string, text: string): void => {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  };
  try {
    for (const [name, text] of Object.entries(files)) plant(name, text);
    await check(dir, plant);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('every import in src/ keeps to the "May import" line of its folder\'s README, and no import makes a cycle', { timeout: 120_000 }, async () => {
  assert.deepEqual(await violations(ROOT), []);
});

test('an import the README does not allow is reported; tests may import anything', { timeout: 60_000 }, async () => {
  await inTree({
    'src/low/README.md': '# low\n\nMay import: nothing of ours.\n',
    'src/low/a.ts': "import { b } from '../high/b.js';\nexport const a = b;\n",
    'src/low/a_test.ts': "import { b } from '../high/b.js';\nexport const t = b;\n",
    'src/high/README.md': '# high\n\nMay import: `low`.\n',
    'src/high/b.ts': 'export const b = 1;\n',
  }, async (dir) => {
    assert.deepEqual(await violations(dir), ['src/low/a.ts -> src/high/b.ts (src/low may import nothing of ours)']);
  });
});

test('the router importing mongod_commands is reported, even where its README allowed everything; no README may allow it', { timeout: 60_000 }, async () => {
  await inTree({
    'src/mongod_commands/README.md': '# mongod_commands\n\nMay import: nothing of ours.\n',
    'src/mongod_commands/dispatcher.ts': 'export const dispatch = 1;\n',
    'src/router/README.md': '# router\n\nMay import: everything in `src/`.\n',
    'src/router/router_dispatcher.ts': "import { dispatch } from '../mongod_commands/dispatcher.js';\nexport const route = dispatch;\n",
    'src/router/router_dispatcher_test.ts': "import { dispatch } from '../mongod_commands/dispatcher.js';\nexport const t = dispatch;\n",
  }, async (dir, plant) => {
    assert.deepEqual(await violations(dir), ['src/router/router_dispatcher.ts -> src/mongod_commands/dispatcher.ts (src/router never imports mongod_commands)']);
    plant('src/router/README.md', '# router\n\nMay import: `mongod_commands`.\n');
    assert.throws(() => layerRules(path.join(dir, 'src')), /src\/router\/README.md may import `mongod_commands`, which src\/router must never import/);
  });
});

test('an adapter imported past its port is reported, from a test too; its port and the composition roots may import it', { timeout: 60_000 }, async () => {
  await inTree({
    'src/storage/README.md': '# storage\n\nMay import: nothing of ours.\n',
    'src/storage/lmdb/kv_store.ts': 'export class KvStore {}\n',
    'src/storage/storage_engine.ts': "import { KvStore } from './lmdb/kv_store.js';\nexport const engine = new KvStore();\n",
    'src/process/README.md': '# process\n\nMay import: everything in `src/`.\n',
    'src/process/root.ts': "import { KvStore } from '../storage/lmdb/kv_store.js';\nexport const root = new KvStore();\n",
    'src/commands/README.md': '# commands\n\nMay import: `storage`.\n',
    'src/commands/dispatcher.ts': "import { KvStore } from '../storage/lmdb/kv_store.js';\nexport const d = new KvStore();\n",
    'src/commands/dispatcher_test.ts': "import { KvStore } from '../storage/lmdb/kv_store.js';\nexport const t = new KvStore();\n",
    'src/commands/ported.ts': "import { engine } from '../storage/storage_engine.js';\nexport const p = engine;\n",
  }, async (dir) => {
    assert.deepEqual(await violations(dir), [
      'src/commands/dispatcher.ts -> src/storage/lmdb/kv_store.ts (src/storage/lmdb is imported only from src/storage, src/process)',
      'src/commands/dispatcher_test.ts -> src/storage/lmdb/kv_store.ts (src/storage/lmdb is imported only from src/storage, src/process)',
    ]);
  });
});

test('a cycle between folders is reported, type-only imports included; between files, a cycle of loaded imports', { timeout: 60_000 }, async () => {
  await inTree({
    'src/one/README.md': '# one\n\nMay import: `two`.\n',
    'src/two/README.md': '# two\n\nMay import: `one`.\n',
    'src/one/a.ts': "import type { B } from '../two/b.js';\nexport type A = B;\n",
    'src/two/b.ts': "import { c } from '../one/c.js';\nexport type B = typeof c;\n",
    'src/one/c.ts': 'export const c = 1;\n',
    'src/one/d.ts': "import { e } from './e.js';\nexport const d = (): number => e();\n",
    'src/one/e.ts': "import { d } from './d.js';\nexport const e = (): number => d();\n",
    'src/one/f.ts': "import type { G } from './g.js';\nexport interface F { g?: G }\n",
    'src/one/g.ts': "import type { F } from './f.js';\nexport interface G { f?: F }\n",
  }, async (dir) => {
    assert.deepEqual(await violations(dir), [
      'folders: one -> two -> one',
      'files: src/one/d.ts -> src/one/e.ts -> src/one/d.ts',
    ]);
  });
});

test('a permission narrowed in parentheses holds: what it covers, and from where', { timeout: 60_000 }, async () => {
  await inTree({
    'src/low/README.md': '# low\n\nMay import: nothing of ours.\n',
    'src/low/pure.ts': 'export const pure = 1;\n',
    'src/low/parts/deep.ts': 'export const deep = 1;\n',
    'src/low/io.ts': 'export const io = 1;\n',
    'src/high/README.md': '# high\n\nMay import: `low` (its pure parts: `pure.ts` and `parts/`, from `exec/` only).\n',
    'src/high/exec/run.ts': "import { pure } from '../../low/pure.js';\nimport { deep } from '../../low/parts/deep.js';\nexport const run = pure + deep;\n",
    'src/high/exec/bad.ts': "import { io } from '../../low/io.js';\nexport const bad = io;\n",
    'src/high/plan.ts': "import { pure } from '../low/pure.js';\nexport const plan = pure;\n",
    'src/high/plan_test.ts': "import { io } from '../low/io.js';\nexport const t = io;\n",
  }, async (dir) => {
    assert.deepEqual(await violations(dir), [
      'src/high/exec/bad.ts -> src/low/io.ts (src/high may import of src/low only pure.ts, parts/)',
      'src/high/plan.ts -> src/low/pure.ts (src/high may import src/low only from exec/)',
    ]);
  });
});

test('a README that limits a permission in words the check cannot hold, or names what is not there, is refused', async () => {
  await inTree({
    'src/low/README.md': '# low\n\nMay import: nothing of ours.\n',
    'src/low/a.ts': 'export const a = 1;\n',
    'src/high/README.md': '# high\n\nMay import: `low` (pure parts).\n',
  }, (dir, plant) => {
    assert.throws(() => layerRules(path.join(dir, 'src')), /limits `low` in words the layering check cannot hold: \(pure parts\)/);
    plant('src/high/README.md', '# high\n\nMay import: `low` (`b.ts`).\n');
    assert.throws(() => layerRules(path.join(dir, 'src')), /narrows `low` to `b.ts`, which is not in src\/low/);
  });
});

test('the rules come from the READMEs: parentheses narrow, "everything" allows all', () => {
  const rules = layerRules(path.join(ROOT, 'src'));
  assert.deepEqual(rules.find((r) => r.folder === 'base')?.mayImport, []);
  assert.equal(rules.find((r) => r.folder === 'process')?.mayImport, undefined);
  assert.ok(rules.find((r) => r.folder === 'router')?.mayImport?.includes('command_layer'));
  assert.ok(!rules.find((r) => r.folder === 'router')?.mayImport?.includes('mongod_commands'));
});
