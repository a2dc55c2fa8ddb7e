import net from 'node:net';
import zlib from 'node:zlib';
import { BSON } from 'bson';
import { uncompressSync as snappyUncompress } from 'snappy';

// What the bad-input tests send: deterministic random bytes and mutations of valid messages, so a
// failing run replays exactly, and a prober that tells whether the server dealt with each one.

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function frame(opCode: number, requestId: number, payload: Buffer, responseTo = 0): Buffer {
  const out = Buffer.alloc(16 + payload.length);
  out.writeInt32LE(out.length, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(responseTo, 8);
  out.writeInt32LE(opCode, 12);
  payload.copy(out, 16);
  return out;
}

export function opMsgPayload(body: Buffer, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32LE(flags, 0);
  return Buffer.concat([head, body]);
}

// An OP_MSG reply carrying `body`, as a fake server answers request `responseTo`.
export function opMsgReply(body: Uint8Array, requestId: number, responseTo: number): Buffer {
  return frame(2013, requestId, opMsgPayload(Buffer.from(body)), responseTo);
}

// An OP_MSG payload of a body section and one document sequence (kind 1) of already encoded documents.
export function sequencePayload(body: Buffer, identifier: string, docs: Buffer): Buffer {
  const name = Buffer.from(identifier + '\0');
  const size = Buffer.alloc(4);
  size.writeInt32LE(4 + name.length + docs.length);
  return Buffer.concat([Buffer.alloc(4), Buffer.from([0]), body, Buffer.from([1]), size, name, docs]);
}

// Overwrites 1 to 4 bytes at or after `from` with random values, single flipped bits or the
// int8 edge values.
export function mutate(buf: Buffer, next: () => number, from = 0): Buffer {
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

// Whether `reply` is a reply message holding exactly one whole BSON document, once decompressed
// when it is OP_COMPRESSED: a reply with any other bytes in it could be carrying the server's memory.
function isWholeReply(reply: Buffer): boolean {
  try {
    let message = reply;
    if (reply.readInt32LE(12) === 2012) {
      const data = reply.subarray(25);
      const inflated = reply[24] === 1 ? (snappyUncompress(data) as Buffer) : zlib.inflateSync(data);
      if (inflated.length !== reply.readInt32LE(20)) return false;
      message = Buffer.concat([reply.subarray(0, 12), reply.subarray(16, 20), inflated]);
    }
    const bodyAt = message.readInt32LE(12) === 2013 ? 21 : message.readInt32LE(12) === 1 ? 36 : -1;
    if (bodyAt < 0 || message.readInt32LE(bodyAt) !== message.length - bodyAt) return false;
    BSON.deserialize(message.subarray(bodyAt));
    return true;
  } catch {
    return false;
  }
}

// Sends one message followed by a ping and waits until the ping's reply arrives or the server
// closes the connection: either way the server has dealt with the message. `hello` opens every
// connection it makes (a hello negotiating compressors lets compressed messages be decompressed).
export class Prober {
  private socket: net.Socket | undefined;
  private buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  private closed = true;
  replies = 0;
  closes = 0;
  // Replies that were not one whole BSON document (isWholeReply).
  malformedReplies = 0;

  constructor(private readonly port: number, private readonly hello?: Buffer) {}

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
    if (this.hello !== undefined) this.socket!.write(this.hello);
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
        if (!isWholeReply(this.buffer.subarray(0, len))) this.malformedReplies += 1;
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

// A document holding `levels` documents each inside the last ({a: {a: ... {}}}), written as bytes:
// the bson package serializes by recursion and would overflow the stack on the deepest ones.
export function nestedDocument(levels: number): Buffer {
  const total = 8 * levels + 5;
  const b = Buffer.alloc(total);
  for (let i = 0; i < levels; i++) {
    b.writeInt32LE(total - 8 * i, 7 * i);
    b[7 * i + 4] = 0x03;
    b[7 * i + 5] = 0x61;
  }
  b.writeInt32LE(5, 7 * levels);
  return b;
}

// `doc` with one more field, `name`, whose value is the embedded document `value` (bytes).
export function withDocumentField(doc: object, name: string, value: Buffer): Buffer {
  const head = Buffer.from(BSON.serialize(doc));
  const out = Buffer.concat([head.subarray(0, head.length - 1), Buffer.from([0x03]), Buffer.from(name + '\0'), value, Buffer.from([0])]);
  out.writeInt32LE(out.length, 0);
  return out;
}

// Sends one message on a connection of its own and gives back the body of its reply (OP_MSG or
// OP_REPLY), or undefined when the server closes the connection instead.
export async function exchange(port: number, message: Buffer): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    let buffer = Buffer.alloc(0);
    const s = net.connect(port, '127.0.0.1', () => s.write(message));
    s.on('data', (d) => {
      buffer = Buffer.concat([buffer, d]);
      if (buffer.length < 16 || buffer.length < buffer.readInt32LE(0)) return;
      s.destroy();
      const bodyAt = buffer.readInt32LE(12) === 2013 ? 21 : 36;
      resolve(BSON.deserialize(buffer.subarray(bodyAt, buffer.readInt32LE(0))));
    });
    s.on('close', () => resolve(undefined));
    s.on('error', () => undefined);
  });
}
