import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import zlib from 'node:zlib';
import { BSON } from 'bson';
import { MongoClient } from 'mongodb';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { frame, opMsgPayload } from '../helpers/wire_fuzz.js';
import { countingProxy } from '../helpers/counting_proxy.js';
import { OpCode } from '../../src/wire/op_codes.js';
import { withNode } from '../helpers/fixtures.js';

// On a node started with --auth, a connection that has not authenticated may send messages of at
// most 16 KiB (MongoDB's preAuthMaximumMessageSizeBytes) and nothing compressed: either closes it
// without a reply. Once authenticated, the official driver sends large and compressed messages.

const PRE_AUTH_MAX = 16 * 1024;
const ZLIB = 2;

function opMsg(body: AnyDoc): Buffer {
  return frame(2013, 1, opMsgPayload(Buffer.from(BSON.serialize(body))));
}

// A hello padded to exactly `length` bytes on the wire.
function helloOfLength(length: number): Buffer {
  const bare = opMsg({ hello: 1, comment: '', $db: 'admin' }).length;
  const message = opMsg({ hello: 1, comment: 'x'.repeat(length - bare), $db: 'admin' });
  assert.equal(message.length, length);
  return message;
}

function compressed(message: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeInt32LE(message.readInt32LE(12), 0);
  head.writeInt32LE(message.length - 16, 4);
  head[8] = ZLIB;
  return frame(2012, message.readInt32LE(4), Buffer.concat([head, zlib.deflateSync(message.subarray(16))]));
}

// Sends `messages` one after another on a new connection, each after the previous reply: the
// replies' bodies, ending where the server closed the connection.
async function exchange(port: number, messages: Buffer[]): Promise<{ replies: AnyDoc[]; closed: boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let buffer = Buffer.alloc(0);
  let closed = false;
  let wake: (() => void) | undefined;
  socket.on('data', (d) => { buffer = Buffer.concat([buffer, d]); wake?.(); });
  socket.on('close', () => { closed = true; wake?.(); });
  await new Promise((resolve) => socket.once('connect', resolve));
  const replies: AnyDoc[] = [];
  for (const message of messages) {
    socket.write(message);
    for (;;) {
      if (buffer.length >= 4 && buffer.length >= buffer.readInt32LE(0)) {
        const reply = buffer.subarray(0, buffer.readInt32LE(0));
        buffer = buffer.subarray(reply.length);
        replies.push(BSON.deserialize(reply.readInt32LE(12) === 2012 ? zlib.inflateSync(reply.subarray(25)).subarray(5) : reply.subarray(21)));
        break;
      }
      if (closed) return { replies, closed };
      await new Promise<void>((resolve) => { wake = resolve; });
    }
  }
  socket.destroy();
  return { replies, closed: false };
}

describe('messages before authentication on a node started with --auth', () => {
  let node: SpawnedNode;
  withNode({ extraArgs: ['--auth'] }, async (f) => {
    node = f.node;
    const local = await MongoClient.connect(node.uri);
    try {
      await local.db('admin').command({ createUser: 'admin', pwd: 'secret', roles: ['root'] });
    } finally {
      await local.close();
    }
  });

  it('answers a message of 16 KiB and closes the connection on one byte more, without a reply', async () => {
    const atCap = await exchange(node.port, [helloOfLength(PRE_AUTH_MAX)]);
    assert.equal(atCap.replies[0]?.ok, 1);
    const over = await exchange(node.port, [helloOfLength(PRE_AUTH_MAX + 1)]);
    assert.deepEqual(over, { replies: [], closed: true });
  });

  it('negotiates compression in hello but closes the connection on a compressed message', async () => {
    const { replies, closed } = await exchange(node.port, [
      opMsg({ hello: 1, compression: ['zlib'], $db: 'admin' }),
      compressed(opMsg({ ping: 1, $db: 'admin' })),
    ]);
    assert.equal(replies.length, 1);
    assert.deepEqual(replies[0]!.compression, ['zlib']);
    assert.equal(closed, true);
  });

  it('lets the driver log in and then send large and compressed messages', async () => {
    const proxy = await countingProxy(node.port);
    const client = await MongoClient.connect(`mongodb://admin:secret@127.0.0.1:${proxy.port}/?authSource=admin&directConnection=true&compressors=zlib`);
    try {
      const coll = client.db('app').collection('big');
      await coll.insertOne({ _id: 1, text: 'y'.repeat(1024 * 1024) } as AnyDoc);
      assert.equal(((await coll.findOne({ _id: 1 } as AnyDoc)) as AnyDoc).text.length, 1024 * 1024);
      assert.ok((proxy.sent.get(OpCode.OP_COMPRESSED) ?? 0) >= 2, `compressed messages sent: ${proxy.sent.get(OpCode.OP_COMPRESSED) ?? 0}`);
    } finally {
      await client.close();
      proxy.stop();
    }
  });
});

describe('messages on a node started without --auth', () => {
  let node: SpawnedNode;
  withNode({}, (f) => { node = f.node; });

  it('answers large and compressed messages from a connection that never authenticated', async () => {
    const { replies, closed } = await exchange(node.port, [
      helloOfLength(64 * 1024),
      opMsg({ hello: 1, compression: ['zlib'], $db: 'admin' }),
      compressed(opMsg({ ping: 1, $db: 'admin' })),
    ]);
    assert.equal(closed, false);
    assert.deepEqual(replies.map((r) => r.ok), [1, 1, 1]);
  });
});
