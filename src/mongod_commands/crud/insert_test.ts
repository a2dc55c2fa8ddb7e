import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { BSON, DBRef, ObjectId } from 'bson';
import type { ShardServices } from '../command.js';
import { systemClock } from '../../base/clock.js';
import { openMongodPorts } from '../../process/mongod_ports.js';
import type { RunningNode } from '../../process/mongod_server.js';
import { startShard } from '../../process/shard_process.js';
import { DEFAULT_PARAMETERS } from '../../process/set_parameter.js';
import { handleMessage } from '../../command_layer/message_handler.js';
import { dispatchCommand } from '../dispatcher.js';
import type { Doc } from '../../bson/values.js';

// Inserts whose documents come as an OP_MSG document sequence are stored from their bytes; the
// same documents in the command body take the decoding path. Both must answer and store alike.
function opMsg(body: Doc, documents?: Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0]), Buffer.from(BSON.serialize(body))];
  if (documents !== undefined) {
    const name = Buffer.from('documents\0');
    const size = Buffer.alloc(4);
    size.writeInt32LE(4 + name.length + documents.reduce((n, d) => n + d.length, 0));
    parts.push(Buffer.from([1]), size, name, ...documents);
  }
  const payload = Buffer.concat(parts);
  const head = Buffer.alloc(20);
  head.writeInt32LE(20 + payload.length, 0);
  head.writeInt32LE(1, 4);
  head.writeInt32LE(2013, 12);
  return Buffer.concat([head, payload]);
}

const bson = (doc: Doc): Buffer => Buffer.from(BSON.serialize(doc));

describe('insert from a document sequence', () => {
  let node: RunningNode<ShardServices>;
  let dir: string;
  const conn = { id: 1, remote: 'test', local: 'test' };

  async function run(body: Doc, documents?: Buffer[]): Promise<Doc> {
    const reply = await handleMessage((c, cmd) => dispatchCommand(node.services, c, cmd), conn, opMsg({ ...body, $db: 'seq' }, documents));
    // Without the times every reply carries, which differ from one command to the next.
    const { $clusterTime: _c, operationTime: _o, ...rest } = BSON.deserialize(reply!.subarray(21));
    return rest;
  }

  // The same statements through the body (decoded) and through a sequence (bytes): same reply,
  // same stored documents but for generated _ids.
  async function bothWays(name: string, docs: Doc[], options: Doc = {}): Promise<{ reply: Doc; stored: Doc[] }> {
    const viaBody = await run({ insert: `${name}_body`, documents: docs, ...options });
    const viaSequence = await run({ insert: `${name}_seq`, ...options }, docs.map(bson));
    const sameNames = (reply: Doc) => JSON.stringify(reply).replaceAll(`${name}_body`, `${name}_seq`);
    assert.equal(sameNames(viaSequence), sameNames(viaBody));
    const stored = async (coll: string) => ((await run({ find: coll, sort: { $natural: 1 } })).cursor as { firstBatch: Doc[] }).firstBatch;
    const fromBody = await stored(`${name}_body`);
    const fromSequence = await stored(`${name}_seq`);
    const withoutGenerated = (d: Doc) => (d._id instanceof ObjectId ? { ...d, _id: 'generated' } : d);
    assert.deepEqual(fromSequence.map(withoutGenerated), fromBody.map(withoutGenerated));
    return { reply: viaSequence, stored: fromSequence };
  }

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'docshard-insert-'));
    const options = { role: 'shard' as const, port: 0, bindIp: '127.0.0.1', dbpath: dir, enableTestCommands: false, maxConns: 1_000_000, parameters: DEFAULT_PARAMETERS };
    node = await startShard(options, await openMongodPorts(options, pino({ level: 'silent' }), [], systemClock));
  });
  after(async () => {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores _id first, generating it when missing', async () => {
    const { stored } = await bothWays('ids', [{ a: 1 }, { a: 2, _id: 7 }, { _id: 'x', b: [1, { c: 2 }] }]);
    assert.deepEqual(stored.map((d) => Object.keys(d)[0]), ['_id', '_id', '_id']);
    assert.ok(stored[0]!._id instanceof ObjectId);
    assert.deepEqual(stored[1], { _id: 7, a: 2 });
  });

  it('reports duplicate keys with keyPattern and keyValue, ordered and unordered', async () => {
    for (const coll of ['dup_body', 'dup_seq', 'dupu_body', 'dupu_seq']) {
      await run({ createIndexes: coll, indexes: [{ key: { e: 1 }, name: 'e_1', unique: true }] });
    }
    const docs = [{ _id: 1, e: 'a' }, { _id: 2, e: 'a' }, { _id: 1, e: 'b' }, { _id: 3, e: 'c' }];
    const ordered = await bothWays('dup', docs);
    assert.equal(ordered.reply.n, 1);
    const unordered = await bothWays('dupu', docs, { ordered: false });
    assert.equal(unordered.reply.n, 2);
    assert.deepEqual((unordered.reply.writeErrors as Doc[]).map((e) => [e.index, e.code, e.keyValue]), [[1, 11000, { e: 'a' }], [2, 11000, { _id: 1 }]]);
  });

  it('refuses bad _id values per statement', async () => {
    const { reply } = await bothWays('badid', [{ _id: [1] }, { _id: { $x: 1 } }, { _id: 2 }, { _id: { $ref: 'c', $id: 1 } }], { ordered: false });
    assert.deepEqual((reply.writeErrors as Doc[]).map((e) => [e.index, e.codeName]), [[0, 'InvalidIdField'], [1, 'DollarPrefixedFieldName']], 'a DBRef is a valid _id');
  });

  it('keeps $-prefixed field names and DBRefs as the decoding path does', async () => {
    await bothWays('dollar', [{ _id: 1, $x: 1, r: new DBRef('c', new ObjectId()) }, { _id: 2, a: { $y: 2 } }, { _id: 3, u: undefined }]);
  });

  it('fails the whole command on invalid BSON and writes nothing', async () => {
    const bad = bson({ _id: 2, s: 'ab' });
    bad[bad.length - 3] = 0xff;
    const reply = await run({ insert: 'invalid' }, [bson({ _id: 1 }), bad]);
    assert.equal(reply.codeName, 'InvalidBSON');
    assert.equal((await run({ count: 'invalid' })).n, 0);
  });
});
