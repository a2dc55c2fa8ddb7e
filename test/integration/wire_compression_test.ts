import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import zlib from 'node:zlib';
import { BSON } from 'bson';
import { MongoClient } from 'mongodb';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { countingProxy } from '../helpers/counting_proxy.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { frame, mutate, opMsgPayload, rng } from '../helpers/wire_fuzz.js';
import { withCluster } from '../helpers/fixtures.js';

// OP_COMPRESSED (opCode 2012) against a shard (a node) and a router: negotiated by hello as
// mongod negotiates it, used by the official driver with compressors: ['zlib'] and ['snappy'],
// and every compressed message that is not exactly right closing its connection without an answer.

const SNAPPY = 1;
const ZLIB = 2;

function opMsg(requestId: number, body: object): Buffer {
  return frame(2013, requestId, opMsgPayload(Buffer.from(BSON.serialize(body))));
}

// `message` (a whole message) compressed as a client would, with the header fields overridable.
function compressed(message: Buffer, fields: { originalOpCode?: number; uncompressedSize?: number; compressorId?: number; payload?: Buffer } = {}): Buffer {
  const payload = fields.payload ?? zlib.deflateSync(message.subarray(16));
  const head = Buffer.alloc(9);
  head.writeInt32LE(fields.originalOpCode ?? message.readInt32LE(12), 0);
  head.writeInt32LE(fields.uncompressedSize ?? message.length - 16, 4);
  head[8] = fields.compressorId ?? ZLIB;
  return frame(2012, message.readInt32LE(4), Buffer.concat([head, payload]));
}

// One client connection on raw bytes: the messages it receives, whole, and whether it was closed.
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d) => { this.buffer = Buffer.concat([this.buffer, d]); this.waiter?.(); });
    socket.on('close', () => { this.closed = true; this.waiter?.(); });
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<RawConnection> {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    return new RawConnection(socket);
  }

  // A connection whose hello negotiated `compressor`.
  static async negotiated(port: number, compressor = 'zlib'): Promise<RawConnection> {
    const conn = await RawConnection.open(port);
    const hello = await conn.request(opMsg(1, { hello: 1, compression: [compressor], $db: 'admin' }));
    assert.deepEqual(hello?.body.compression, [compressor]);
    return conn;
  }

  // Sends `message` and waits for one reply (its opCode and body, decompressed) or the close.
  async request(message: Buffer): Promise<{ opCode: number; compressorId?: number; body: AnyDoc } | undefined> {
    this.socket.write(message);
    for (;;) {
      if (this.buffer.length >= 4 && this.buffer.length >= this.buffer.readInt32LE(0)) {
        const reply = this.buffer.subarray(0, this.buffer.readInt32LE(0));
        this.buffer = this.buffer.subarray(reply.length);
        const opCode = reply.readInt32LE(12);
        return { opCode, ...(opCode === 2012 ? { compressorId: reply[24] } : {}), body: replyBody(reply) };
      }
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => { this.waiter = resolve; });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

// The body of an OP_MSG reply, compressed or not; the inflated size must be the declared one.
function replyBody(reply: Buffer): AnyDoc {
  if (reply.readInt32LE(12) !== 2012) return BSON.deserialize(reply.subarray(21));
  assert.equal(reply.readInt32LE(16), 2013);
  const inflated = reply[24] === SNAPPY ? snappyUncompress(reply.subarray(25)) as Buffer : zlib.inflateSync(reply.subarray(25));
  assert.equal(inflated.length, reply.readInt32LE(20));
  return BSON.deserialize(inflated.subarray(5));
}

describe('OP_COMPRESSED', () => {
  let cluster: SpawnedCluster;
  const targets: { name: string; port: () => number }[] = [
    { name: 'a node', port: () => cluster.shards[0]!.port },
    { name: 'a router', port: () => cluster.routers[0]!.port },
  ];

  withCluster({ shards: 1 }, async (f) => {
    cluster = f.cluster;
    const admin = new MongoClient(cluster.routers[0]!.uri);
    try {
      await admin.db('admin').command({ enableSharding: 'zip' });
      await admin.db('admin').command({ shardCollection: 'zip.sharded', key: { k: 1 } });
    } finally {
      await admin.close();
    }
  });

  for (const target of targets) {
    it(`is negotiated by ${target.name}'s hello as mongod negotiates it`, async () => {
      const conn = await RawConnection.open(target.port());
      try {
        const hello = async (fields: AnyDoc) => (await conn.request(opMsg(1, { hello: 1, ...fields, $db: 'admin' })))!.body;
        assert.equal((await hello({})).compression, undefined);
        assert.deepEqual((await hello({ compression: ['zstd', 'zlib', 'snappy'] })).compression, ['zlib', 'snappy']);
        // A hello that lists none is told the connection's choice.
        assert.deepEqual((await hello({})).compression, ['zlib', 'snappy']);
        assert.equal((await hello({ compression: ['zstd'] })).compression, undefined);
        assert.equal((await hello({ compression: [] })).compression, undefined);
        const refusal = ({ ok, errmsg, code, codeName }: AnyDoc) => ({ ok, errmsg, code, codeName });
        assert.deepEqual(refusal(await hello({ compression: 'zlib' })), { ok: 0, errmsg: "BSON field 'hello.compression' is the wrong type 'string', expected type 'array'", code: 14, codeName: 'TypeMismatch' });
        assert.deepEqual(refusal(await hello({ compression: ['zlib', 2] })), { ok: 0, errmsg: "BSON field 'hello.compression.1' is the wrong type 'int', expected type 'string'", code: 14, codeName: 'TypeMismatch' });
      } finally {
        conn.close();
      }
    });

    for (const compressor of ['zlib', 'snappy'] as const) it(`carries the official driver's commands to ${target.name} with ${compressor}, both ways`, async () => {
      const proxy = await countingProxy(target.port());
      const client = new MongoClient(`mongodb://127.0.0.1:${proxy.port}/?directConnection=true`, { compressors: [compressor] });
      try {
        const coll = client.db('zip').collection<AnyDoc>(target.name === 'a router' ? 'sharded' : 'plain');
        const docs = Array.from({ length: 2000 }, (_, i) => ({ _id: i, k: i, text: `value ${i} `.repeat(20) }));
        await coll.insertMany(docs);
        assert.deepEqual(await coll.find({}).sort({ _id: 1 }).toArray(), docs);
        assert.deepEqual(await coll.findOne({ k: 1500 }), docs[1500]);
        assert.deepEqual(await coll.aggregate([{ $group: { _id: null, n: { $sum: 1 } } }]).toArray(), [{ _id: null, n: 2000 }]);
        await coll.deleteMany({});
        assert.ok((proxy.sent.get(2012) ?? 0) >= 5, `compressed requests: ${proxy.sent.get(2012)}`);
        assert.equal(proxy.sent.get(2012), proxy.received.get(2012), 'every compressed request has a compressed reply');
      } finally {
        await client.close();
        proxy.stop();
      }
    });

    it(`answers a compressed request to ${target.name} compressed, and closes the connection on every compressed message not exactly right`, async () => {
      const ping = opMsg(5, { ping: 1, $db: 'admin' });
      for (const [name, id] of [['zlib', ZLIB], ['snappy', SNAPPY]] as const) {
        const good = await RawConnection.negotiated(target.port(), name);
        try {
          const payload = id === SNAPPY ? snappyCompress(ping.subarray(16)) : undefined;
          const reply = await good.request(compressed(ping, { compressorId: id, payload }));
          assert.equal(reply?.opCode, 2012);
          assert.equal(reply?.compressorId, id);
          assert.equal(reply?.body.ok, 1);
        } finally {
          good.close();
        }
      }

      const bad: [string, Buffer, boolean][] = [
        ['before any hello negotiated a compressor', compressed(ping), false],
        ['with an unknown compressor id', compressed(ping, { compressorId: 9 }), true],
        ['with snappy, which was not negotiated', compressed(ping, { compressorId: 1 }), true],
        ['declaring more bytes than inflate (MongoBleed)', compressed(ping, { uncompressedSize: ping.length - 16 + 4096 }), true],
        ['declaring fewer bytes than inflate', compressed(ping, { uncompressedSize: ping.length - 20 }), true],
        ['declaring more than 48,000,000 bytes', compressed(ping, { uncompressedSize: 48_000_000 }), true],
        ['declaring a negative size', compressed(ping, { uncompressedSize: -5 }), true],
        ['holding a compressed message', compressed(compressed(ping)), true],
        ['holding bytes that are not zlib', compressed(ping, { payload: Buffer.from('plain text, not zlib') }), true],
        ['a zlib bomb declared small', compressed(ping, { payload: zlib.deflateSync(Buffer.alloc(40_000_000)), uncompressedSize: 100 }), true],
      ];
      const snappyPing = snappyCompress(ping.subarray(16));
      const snappyBad: [string, Buffer][] = [
        ['declaring more bytes than its snappy data holds (MongoBleed)', compressed(ping, { compressorId: SNAPPY, payload: snappyPing, uncompressedSize: ping.length - 16 + 4096 })],
        ['holding snappy data whose length prefix lies', compressed(ping, { compressorId: SNAPPY, payload: Buffer.concat([Buffer.from([ping.length - 16]), snappyPing.subarray(1, 8)]) })],
        ['with zlib, which was not negotiated', compressed(ping)],
      ];
      for (const [what, message] of snappyBad) {
        const conn = await RawConnection.negotiated(target.port(), 'snappy');
        try {
          assert.equal(await conn.request(message), undefined, `a compressed message ${what} is answered by closing the connection`);
        } finally {
          conn.close();
        }
      }
      for (const [what, message, negotiate] of bad) {
        const conn = negotiate ? await RawConnection.negotiated(target.port()) : await RawConnection.open(target.port());
        try {
          assert.equal(await conn.request(message), undefined, `a compressed message ${what} is answered by closing the connection`);
        } finally {
          conn.close();
        }
      }
    });

    it(`survives mangled compressed messages sent to ${target.name}, answering only with whole BSON replies`, { timeout: 300_000 }, async () => {
      const next = rng(2012);
      const bodies = [
        { ping: 1, $db: 'admin' },
        { find: 'plain', filter: { k: { $gt: 5 } }, $db: 'zip' },
        { insert: 'fuzz', documents: [{ a: 1, b: 'text '.repeat(40) }], $db: 'zip' },
      ];
      let conn = await RawConnection.negotiated(target.port());
      let answered = 0;
      try {
        for (let i = 0; i < 600; i++) {
          const message = compressed(opMsg(100 + i, bodies[i % bodies.length]!));
          // The length field stays: lengths that lie are the framer's case.
          const reply = await conn.request(mutate(message, next, 4));
          if (reply === undefined) {
            conn.close();
            conn = await RawConnection.negotiated(target.port());
            continue;
          }
          answered += 1;
          assert.equal(typeof reply.body.ok, 'number');
        }
        assert.equal((await conn.request(compressed(opMsg(9, { ping: 1, $db: 'admin' }))))?.body.ok, 1);
      } finally {
        conn.close();
      }
      assert.ok(answered > 0);
    });
  }
});
