import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import { withNode } from '../helpers/fixtures.js';

const MONGOSH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/mongosh');
const run = promisify(execFile);

async function mongosh(uri: string, script: string): Promise<string> {
  const { stdout } = await run(MONGOSH, [uri, '--quiet', '--norc', '--eval', script], { timeout: 60_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
  return stdout.trim();
}

describe('mongosh against a docshard node', () => {
  let node: SpawnedNode;
  withNode({}, (f) => { node = f.node; });

  it('inserts, finds, updates, aggregates, creates an index and shows dbs', { timeout: 120_000 }, async () => {
    const uri = `mongodb://127.0.0.1:${node.port}/shell`;
    const out = await mongosh(uri, `
      db.pets.insertMany([{name: 'rex', kind: 'dog', age: 3}, {name: 'tom', kind: 'cat', age: 5}, {name: 'fido', kind: 'dog', age: 7}]);
      db.pets.updateOne({name: 'tom'}, {$set: {age: 6}});
      db.pets.createIndex({kind: 1, age: -1});
      const found = db.pets.find({kind: 'dog'}, {_id: 0, name: 1}).sort({age: 1}).toArray();
      const groups = db.pets.aggregate([{$group: {_id: '$kind', total: {$sum: '$age'}}}, {$sort: {_id: 1}}]).toArray();
      const indexes = db.pets.getIndexes().map(i => i.name);
      const dbs = db.adminCommand({listDatabases: 1}).databases.map(d => d.name);
      print(JSON.stringify({found, groups, indexes, tom: db.pets.findOne({name: 'tom'}).age, dbs}));
    `);
    const result = JSON.parse(out.split('\n').pop()!);
    assert.deepEqual(result.found, [{ name: 'rex' }, { name: 'fido' }]);
    assert.deepEqual(result.groups, [{ _id: 'cat', total: 6 }, { _id: 'dog', total: 10 }]);
    assert.deepEqual(result.indexes, ['_id_', 'kind_1_age_-1']);
    assert.equal(result.tom, 6);
    assert.ok(result.dbs.includes('shell'));
    const shown = await mongosh(uri, 'show dbs');
    assert.match(shown, /shell/);
  });
});
