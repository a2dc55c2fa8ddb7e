import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { BSON } from 'bson';
import type { SpawnedNode } from '../helpers/spawn_node.js';
import { withNode } from '../helpers/fixtures.js';

// Raw-socket tests of the framing rules the driver relies on (OP_MSG spec, CLIENTS.md §1).
function opMsg(requestId: number, body: object, flags = 0, sequences: { id: string; docs: object[] }[] = [], checksum = false): Buffer {
  const parts: Buffer[] = [Buffer.from([0]), Buffer.from(BSON.serialize(body))];
  for (const s of sequences) {
    const docs = Buffer.concat(s.docs.map((d) => Buffer.from(BSON.serialize(d))));
    const name = Buffer.from(s.id + '\0');
    const size = Buffer.alloc(4);
    size.writeInt32LE(4 + name.length + docs.length);
    parts.push(Buffer.from([1]), size, name, docs);
  }
  const payload = Buffer.concat(parts);
  const total = 16 + 4 + payload.length + (checksum ? 4 : 0);
  const out = Buffer.alloc(total);
  out.writeInt32LE(total, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(0, 8);
  out.writeInt32LE(2013, 12);
  out.writeUInt32LE(flags | (checksum ? 1 : 0), 16);
  payload.copy(out, 20);
  return out;
}

function opQuery(requestId: number, ns: string, query: object): Buffer {
  const name = Buffer.from(ns + '\0');
  const q = Buffer.from(BSON.serialize(query));
  const total = 16 + 4 + name.length + 8 + q.length;
  const out = Buffer.alloc(total);
  out.writeInt32LE(total, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(2004, 12);
  out.writeInt32LE(0, 16);
  name.copy(out, 20);
  out.writeInt32LE(0, 20 + name.length);
  out.writeInt32LE(-1, 24 + name.length);
  q.copy(out, 28 + name.length);
  return out;
}

class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;
  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('error', () => undefined);
  }
  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(s)));
      s.once('error', reject);
    });
  }
  send(b: Buffer): void {
    this.socket.write(b);
  }
  async reply(timeoutMs = 5000): Promise<{ opCode: number; responseTo: number; doc: Record<string, unknown> } | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffer.length < 4 || this.buffer.length < this.buffer.readInt32LE(0)) {
      if (this.closed || Date.now() > deadline) return undefined;
      await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, 50); });
    }
    const len = this.buffer.readInt32LE(0);
    const msg = this.buffer.subarray(0, len);
    this.buffer = this.buffer.subarray(len);
    const opCode = msg.readInt32LE(12);
    const docStart = opCode === 1 ? 36 : 21;
    return { opCode, responseTo: msg.readInt32LE(8), doc: BSON.deserialize(msg.subarray(docStart)) };
  }
  close(): void {
    this.socket.destroy();
  }
}

describe('the wire protocol', () => {
  let node: SpawnedNode;
  withNode({}, (f) => { node = f.node; });

  it('answers the legacy OP_QUERY handshake with OP_REPLY', async () => {
    const c = await RawConnection.open(node.port);
    c.send(opQuery(7, 'admin.$cmd', { ismaster: 1, helloOk: true, client: { driver: { name: 'raw' } } }));
    const r = await c.reply();
    assert.equal(r?.opCode, 1);
    assert.equal(r?.responseTo, 7);
    assert.equal(r?.doc.ismaster, true);
    assert.equal(r?.doc.helloOk, true);
    assert.equal(r?.doc.maxWireVersion, 21);
    assert.equal(r?.doc.compression, undefined);
    c.close();
  });

  it('rejects other OP_QUERY commands with UnsupportedOpQueryCommand', async () => {
    const c = await RawConnection.open(node.port);
    c.send(opQuery(8, 'test.$cmd', { find: 'x' }));
    const r = await c.reply();
    assert.equal(r?.doc.code, 352);
    assert.equal(r?.doc.codeName, 'UnsupportedOpQueryCommand');
    c.close();
  });

  it('merges kind-1 document sequences into the body', async () => {
    const c = await RawConnection.open(node.port);
    c.send(opMsg(1, { insert: 'seq', $db: 'wire' }, 0, [{ id: 'documents', docs: [{ _id: 1 }, { _id: 2 }] }]));
    assert.equal((await c.reply())?.doc.n, 2);
    c.send(opMsg(2, { count: 'seq', $db: 'wire' }));
    assert.equal((await c.reply())?.doc.n, 2);
    c.close();
  });

  it('sends no reply to a moreToCome request and stays in step', async () => {
    const c = await RawConnection.open(node.port);
    c.send(opMsg(3, { insert: 'w0', documents: [{ a: 1 }], writeConcern: { w: 0 }, $db: 'wire' }, 2));
    c.send(opMsg(4, { ping: 1, $db: 'admin' }));
    const r = await c.reply();
    assert.equal(r?.responseTo, 4);
    assert.equal(r?.doc.ok, 1);
    c.close();
  });

  it('accepts the checksum flag and strips the checksum', async () => {
    const c = await RawConnection.open(node.port);
    c.send(opMsg(5, { ping: 1, $db: 'admin' }, 0, [], true));
    assert.equal((await c.reply())?.doc.ok, 1);
    c.close();
  });

  it('closes the connection on a message length over the limit or below the header size', async () => {
    for (const length of [48_000_001, 3, -5]) {
      const c = await RawConnection.open(node.port);
      const b = Buffer.alloc(16);
      b.writeInt32LE(length, 0);
      c.send(b);
      assert.equal(await c.reply(3000), undefined);
      assert.equal(c.closed, true);
    }
  });

  it('closes the connection on unknown required OP_MSG flag bits', async () => {
    const c = await RawConnection.open(node.port);
    c.send(opMsg(6, { ping: 1, $db: 'admin' }, 1 << 4));
    assert.equal(await c.reply(3000), undefined);
    assert.equal(c.closed, true);
  });

  it('answers invalid BSON in a well-framed message with an error', async () => {
    const c = await RawConnection.open(node.port);
    const m = opMsg(9, { ping: 1, $db: 'admin' });
    m.writeInt32LE(1000, 21);
    c.send(m);
    const r = await c.reply();
    assert.equal(r?.doc.ok, 0);
    assert.equal(typeof r?.doc.code, 'number');
    c.send(opMsg(10, { ping: 1, $db: 'admin' }));
    assert.equal((await c.reply())?.doc.ok, 1);
    c.close();
  });
});
