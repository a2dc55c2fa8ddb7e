import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BSON } from 'bson';
import { MongoClient } from 'mongodb';
import { removeDir, spawnNode, type AnyDoc } from '../helpers/spawn_node.js';

const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/compat/specs/bson-corpus/tests');
const MESSAGES = 10_000;

// A deterministic generator, so a failing run replays exactly.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function frame(opCode: number, requestId: number, payload: Buffer): Buffer {
  const out = Buffer.alloc(16 + payload.length);
  out.writeInt32LE(out.length, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(0, 8);
  out.writeInt32LE(opCode, 12);
  payload.copy(out, 16);
  return out;
}

function opMsgPayload(body: Buffer, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32LE(flags, 0);
  return Buffer.concat([head, body]);
}

function sequencePayload(identifier: string, docs: Buffer): Buffer {
  const body = Buffer.from(BSON.serialize({ insert: 'fuzz', $db: 'fuzz' }));
  const name = Buffer.from(identifier + '\0');
  const size = Buffer.alloc(4);
  size.writeInt32LE(4 + name.length + docs.length);
  return Buffer.concat([Buffer.alloc(4), Buffer.from([0]), body, Buffer.from([1]), size, name, docs]);
}

function corpusDecodeErrors(): Buffer[] {
  const out: Buffer[] = [];
  for (const file of readdirSync(CORPUS).filter((f) => f.endsWith('.json'))) {
    const spec = JSON.parse(readFileSync(path.join(CORPUS, file), 'utf8')) as { decodeErrors?: { bson: string }[] };
    for (const e of spec.decodeErrors ?? []) out.push(Buffer.from(e.bson, 'hex'));
  }
  return out;
}

const VALID_BODIES = [
  { ping: 1, $db: 'admin' },
  { insert: 'fuzz', documents: [{ a: 1, b: 'x', c: [1, 2, { d: null }] }], $db: 'fuzz' },
  { find: 'fuzz', filter: { a: { $gt: 0 } }, sort: { a: 1 }, $db: 'fuzz' },
  { update: 'fuzz', updates: [{ q: { a: 1 }, u: { $set: { b: 'y' } } }], $db: 'fuzz' },
  { aggregate: 'fuzz', pipeline: [{ $match: {} }, { $group: { _id: '$a', n: { $sum: 1 } } }], cursor: {}, $db: 'fuzz' },
  { createIndexes: 'fuzz', indexes: [{ key: { a: 1 }, name: 'a_1' }], $db: 'fuzz' },
].map((b) => Buffer.from(BSON.serialize(b)));

function mutate(buf: Buffer, next: () => number, from = 0): Buffer {
  const out = Buffer.from(buf);
  const flips = 1 + Math.floor(next() * 4);
  for (let i = 0; i < flips; i++) {
    const at = from + Math.floor(next() * (out.length - from));
    switch (Math.floor(next() * 3)) {
      case 0: out[at] = Math.floor(next() * 256); break;
      case 1: out[at] = out[at]! ^ (1 << Math.floor(next() * 8)); break;
      default: out.writeInt8([0, -1, 127, -128][Math.floor(next() * 4)]!, at); break;
    }
  }
  return out;
}

// Sends one message followed by a ping and waits until the ping's reply arrives or the server
// closes the connection: either way the server has dealt with the message.
class Prober {
  private socket: net.Socket | undefined;
  private buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  private closed = true;
  replies = 0;
  closes = 0;

  constructor(private readonly port: number) {}

  private async connect(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const s = net.connect(this.port, '127.0.0.1', () => resolve());
      s.once('error', reject);
      s.on('data', (d) => { this.buffer = Buffer.concat([this.buffer, d]); this.waiter?.(); });
      s.on('close', () => { this.closed = true; this.waiter?.(); });
      s.on('error', () => undefined);
      this.socket = s;
    });
    this.closed = false;
    this.buffer = Buffer.alloc(0);
  }

  async probe(message: Buffer, pingId: number): Promise<void> {
    if (this.closed) await this.connect();
    this.socket!.write(message);
    this.socket!.write(frame(2013, pingId, opMsgPayload(Buffer.from(BSON.serialize({ ping: 1, $db: 'admin' })))));
    const deadline = Date.now() + 5000;
    for (;;) {
      while (this.buffer.length >= 16 && this.buffer.length >= this.buffer.readInt32LE(0)) {
        const len = this.buffer.readInt32LE(0);
        const responseTo = this.buffer.readInt32LE(8);
        this.buffer = this.buffer.subarray(len);
        this.replies += 1;
        if (responseTo === pingId) return;
      }
      if (this.closed) {
        this.closes += 1;
        return;
      }
      if (Date.now() > deadline) {
        // The fuzzed message declared more bytes than it carried: the server is still waiting for
        // them, which is correct. Start a new connection.
        this.socket!.destroy();
        this.closed = true;
        return;
      }
      await new Promise<void>((r) => { this.waiter = r; setTimeout(r, 100); });
    }
  }

  close(): void {
    this.socket?.destroy();
  }
}

describe('bad input never crashes a node', () => {
  it(`survives ${MESSAGES} random and mutated messages and every BSON corpus decode error`, { timeout: 600_000 }, async () => {
    const node = await spawnNode();
    const client = new MongoClient(node.uri);
    try {
      const seeded = client.db('fuzzcheck').collection<AnyDoc>('keep');
      await seeded.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, v: `value-${i}` })));
      const next = rng(20261122);
      const prober = new Prober(node.port);
      const corpus = corpusDecodeErrors();
      assert.ok(corpus.length >= 70, 'the BSON corpus decode errors are present');
      const messages: Buffer[] = [];
      for (const bad of corpus) {
        messages.push(frame(2013, 1, opMsgPayload(bad)));
        messages.push(frame(2013, 1, sequencePayload('documents', bad)));
        messages.push(frame(2004, 1, Buffer.concat([Buffer.alloc(4), Buffer.from('admin.$cmd\0'), Buffer.alloc(8), bad])));
      }
      while (messages.length < MESSAGES) {
        const kind = Math.floor(next() * 5);
        const body = VALID_BODIES[Math.floor(next() * VALID_BODIES.length)]!;
        if (kind === 0) {
          const len = Math.floor(next() * 200);
          messages.push(frame([2013, 2004, 2012, 1, 9999][Math.floor(next() * 5)]!, 1, Buffer.from(Array.from({ length: len }, () => Math.floor(next() * 256)))));
        } else if (kind === 1) {
          messages.push(frame(2013, 1, opMsgPayload(mutate(body, next))));
        } else if (kind === 2) {
          // The length field stays intact here: garbage lengths are the framer's case, covered above.
          messages.push(mutate(frame(2013, 1, opMsgPayload(body)), next, 4));
        } else if (kind === 3) {
          messages.push(frame(2013, 1, opMsgPayload(body, Math.floor(next() * 4) === 0 ? Math.floor(next() * 0xffffffff) : 0)));
        } else {
          messages.push(frame(2013, 1, sequencePayload(['documents', 'updates', 'x'][Math.floor(next() * 3)]!, mutate(body, next))));
        }
      }
      let pingId = 1_000_000;
      for (const m of messages) await prober.probe(m, pingId++);
      prober.close();
      assert.ok(prober.replies > 0);

      const ping = await client.db('admin').command({ ping: 1 });
      assert.equal(ping.ok, 1);
      const kept = await seeded.find({}).sort({ _id: 1 }).toArray();
      assert.equal(kept.length, 100);
      assert.deepEqual(kept[42], { _id: 42, v: 'value-42' });
    } finally {
      await client.close();
      await node.stop();
      removeDir(node.dbpath);
    }
  });
});
