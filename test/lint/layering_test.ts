import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import { forbiddenRules, layerRules } from './layer_rules.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// The imports of `dir`/src that break its READMEs' rules, as "from -> to".
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
    const output = result.output as { summary: { violations: { from: string; to: string; rule: { name: string } }[] } };
    return output.summary.violations.map((v) => `${v.from} -> ${v.to} (${v.rule.name})`);
  } finally {
    process.chdir(cwd);
  }
}

test('every import in src/ keeps to the "May import" line of its folder\'s README', { timeout: 120_000 }, async () => {
  assert.deepEqual(await violations(ROOT), []);
});

test('an import the README does not allow is reported; tests may import anything', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-layers-'));
  try {
    const file = (name: string, text: string) => {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    };
    file('src/low/README.md', '# low\n\nMay import: nothing of ours.\n');
    file('src/low/a.ts', "import { b } from '../high/b.js';\nexport const a = b;\n");
    file('src/low/a_test.ts', "import { b } from '../high/b.js';\nexport const t = b;\n");
    file('src/high/README.md', '# high\n\nMay import: `low` (for\nits a).\n');
    file('src/high/b.ts', "export const b = 1;\n");
    file('src/high/c.ts', "import { a } from '../low/a.js';\nexport const c = a;\n");
    assert.deepEqual(await violations(dir), ['src/low/a.ts -> src/high/b.ts (src/low may import nothing of ours)']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the rules come from the READMEs: qualifiers in parentheses narrow, "everything" allows all', () => {
  const rules = layerRules(path.join(ROOT, 'src'));
  assert.deepEqual(rules.find((r) => r.folder === 'base')?.mayImport, []);
  assert.equal(rules.find((r) => r.folder === 'process')?.mayImport, undefined);
  assert.ok(rules.find((r) => r.folder === 'router')?.mayImport?.includes('command_layer'));
});
