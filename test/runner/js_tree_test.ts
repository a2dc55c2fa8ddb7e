import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeJsTree } from './js_tree.js';

const FILES: Record<string, string> = {
  'tsconfig.json': '{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "useDefineForClassFields": false } }\n',
  'src/a.ts': [
    "import { where, Counted } from './b.js';",
    'export const here: string = import.meta.url;',
    "export const text = 'import.meta.url';",
    'export { where, Counted };',
  ].join('\n'),
  'src/b.ts': [
    'export const where = (): string => import.meta.url;',
    'export class Counted { count!: number; }',
  ].join('\n'),
  'src/types.d.ts': 'declare const planted: number;\n',
  'src/broken.ts': 'export const x = ;\n',
  'test/t.ts': "export const t: number = 1;\n",
  'other/o.ts': "export const o: number = 1;\n",
};

test('the TypeScript of the given folders runs as JavaScript at the same paths, each module still at its source file\'s URL; what esbuild cannot read throws where imported', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docshard-js-tree-'));
  try {
    for (const [name, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
    }
    const out = path.join(root, 'out');
    const errors = await writeJsTree(root, ['src', 'test'], out);
    assert.equal(errors.length, 1);
    assert.match(errors[0] ?? '', /broken\.ts:1:\d+: ERROR/);
    assert.ok(existsSync(path.join(out, 'test', 't.js')));
    assert.ok(!existsSync(path.join(out, 'other')));
    assert.ok(!existsSync(path.join(out, 'src', 'types.d.js')) && !existsSync(path.join(out, 'src', 'types.js')));

    const a = await import(pathToFileURL(path.join(out, 'src', 'a.js')).href) as { here: string; text: string; where: () => string; Counted: new () => object };
    assert.equal(a.here, pathToFileURL(path.join(root, 'src', 'a.ts')).href);
    assert.equal(a.where(), pathToFileURL(path.join(root, 'src', 'b.ts')).href);
    assert.equal(a.text, 'import.meta.url');
    // The tree's tsconfig rules, as under tsx: this one has a field only once it is assigned.
    assert.ok(!Object.hasOwn(new a.Counted(), 'count'));
    await assert.rejects(import(pathToFileURL(path.join(out, 'src', 'broken.js')).href), (err: Error) => err instanceof SyntaxError && /broken\.ts/.test(err.message));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
