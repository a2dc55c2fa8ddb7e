import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MongoClient, MongoServerError } from 'mongodb';
import { removeDir, tempDir } from '../helpers/spawn_node.js';
import { startUp, type Up } from '../helpers/spawn_up.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MONGOSH = path.join(ROOT, 'node_modules/.bin/mongosh');
const run = promisify(execFile);

async function mongosh(...args: string[]): Promise<string> {
  const { stdout } = await run(MONGOSH, ['--quiet', '--norc', ...args], { timeout: 90_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
  return stdout.trim();
}

async function stop(up: Up): Promise<void> {
  up.child.kill('SIGTERM');
  assert.equal(await up.exited, 0);
}

// `docshard up --auth`: a key file in the directory shared by every process, the first user made
// from this host as `up` says, mongosh and the driver logging in, and the key kept for a restart.
describe('docshard up --auth', () => {
  const dir = tempDir('docshard-up-auth-');
  let up: Up;
  before(async () => {
    up = await startUp(dir, 2, ['--auth']);
  });
  after(async () => {
    if (up.child.exitCode === null) await stop(up);
    removeDir(dir);
  });

  it('makes a key file its owner alone may read, starts every process with it and says how to make the first user', () => {
    const file = path.join(dir, 'keyfile');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(readFileSync(file, 'utf8'), /^[A-Za-z0-9+/]{1008}\n$/);
    const printed = up.output.join('');
    assert.ok(printed.includes(`authentication is on (the processes share the key in ${path.resolve(dir, 'keyfile')})`), printed);
    assert.ok(printed.includes(`npx mongosh "${up.uri}/admin" --eval "db.createUser({user: 'admin', pwd: passwordPrompt(), roles: ['root']})"`), printed);
    assert.ok(printed.includes(`then connect with ${up.uri.replace('mongodb://', 'mongodb://admin:PASSWORD@')}/?authSource=admin`), printed);
    assert.ok(printed.includes(`console: off with authentication (it asks for no login); metrics: ${up.consoleUrl}metrics`), printed);
  });

  it("serves the router's metrics but not its console, whose Kill button asks for no login", async () => {
    assert.equal((await fetch(`${up.consoleUrl}metrics`)).status, 200);
    assert.equal((await fetch(up.consoleUrl)).status, 404);
    assert.equal((await fetch(`${up.consoleUrl}kill`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"opid":1}' })).status, 404);
  });

  it('refuses everything before a login; mongosh makes the first user and logs in with -u -p', async () => {
    const client = await MongoClient.connect(up.uri);
    try {
      const err = await client.db('app').collection('c').findOne({}).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof MongoServerError && err.code === 13, String(err));
    } finally {
      await client.close();
    }
    // As `up` prints it, with the password given rather than prompted for.
    assert.match(await mongosh(`${up.uri}/admin`, '--eval', "db.createUser({user: 'admin', pwd: 'secret', roles: ['root']})"), /ok: 1/);
    const inserted = await mongosh(up.uri, '-u', 'admin', '-p', 'secret', '--authenticationDatabase', 'admin', '--eval', "sh.enableSharding('app'); sh.shardCollection('app.c', {k: 'hashed'}); db.getSiblingDB('app').c.insertMany([{k: 1}, {k: 2}, {k: 3}]).insertedIds ? db.getSiblingDB('app').c.countDocuments() : -1");
    assert.equal(inserted.split('\n').at(-1), '3');
  });

  it('keeps the key and the users when started again, even without --auth', async () => {
    const key = readFileSync(path.join(dir, 'keyfile'), 'utf8');
    await stop(up);
    up = await startUp(dir, 2);
    assert.equal(readFileSync(path.join(dir, 'keyfile'), 'utf8'), key);
    const client = await MongoClient.connect(`${up.uri.replace('mongodb://', 'mongodb://admin:secret@')}/?authSource=admin`);
    try {
      assert.equal(await client.db('app').collection('c').countDocuments({}), 3);
    } finally {
      await client.close();
    }
    const anonymous = await MongoClient.connect(up.uri);
    try {
      const err = await anonymous.db('app').collection('c').findOne({}).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof MongoServerError && err.code === 13, String(err));
    } finally {
      await anonymous.close();
    }
  });
});
