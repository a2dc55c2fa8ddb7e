import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { HEADER_SIZE } from './op_codes.js';
import { TcpServer } from './tcp_server.js';

// A message is a header and a 4-byte payload: what the handler is asked to do (0: reply at once,
// 1: reply after a delay, 2: no reply). The reply carries the request id and the connection id.
function request(requestId: number, action: number): Buffer {
  const b = Buffer.alloc(HEADER_SIZE + 4);
  b.writeInt32LE(b.length, 0);
  b.writeInt32LE(requestId, 4);
  b.writeInt32LE(action, HEADER_SIZE);
  return b;
}

function reply(requestId: number, connId: number): Buffer {
  const b = Buffer.alloc(HEADER_SIZE + 4);
  b.writeInt32LE(b.length, 0);
  b.writeInt32LE(requestId, 8);
  b.writeInt32LE(connId, HEADER_SIZE);
  return b;
}

// Sends `bytes` and collects `count` replies as [requestId, connection id].
function exchange(port: number, bytes: Buffer[], count: number): Promise<[number, number][]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const replies: [number, number][] = [];
    let buffered = Buffer.alloc(0);
    socket.on('connect', () => {
      for (const b of bytes) socket.write(b);
    });
    socket.on('data', (d) => {
      buffered = Buffer.concat([buffered, d]);
      while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
        replies.push([buffered.readInt32LE(8), buffered.readInt32LE(HEADER_SIZE)]);
        buffered = buffered.subarray(buffered.readInt32LE(0));
      }
      if (replies.length === count) {
        socket.destroy();
        resolve(replies);
      }
    });
    socket.on('error', reject);
  });
}

describe('TcpServer', () => {
  const server = new TcpServer({
    onMessage(conn, message) {
      const action = message.readInt32LE(HEADER_SIZE);
      const out = reply(message.readInt32LE(4), conn.id);
      if (action === 1) return sleep(5).then(() => out);
      return action === 2 ? undefined : out;
    },
  });
  let port = 0;
  before(async () => { port = await server.listen(0, '127.0.0.1'); });
  after(() => server.close());

  it('answers pipelined requests in their order, whether they complete at once or later', async () => {
    const actions = [0, 1, 0, 2, 0, 1, 1, 0];
    const whole = Buffer.concat(actions.map((a, i) => request(i + 1, a)));
    const replies = await exchange(port, [whole.subarray(0, 7), whole.subarray(7, 40), whole.subarray(40)], actions.length - 1);
    assert.deepEqual(replies.map(([id]) => id), [1, 2, 3, 5, 6, 7, 8]);
  });

  it('gives each of many concurrent connections its own replies', async () => {
    const all = await Promise.all(Array.from({ length: 16 }, (_, c) =>
      exchange(port, Array.from({ length: 20 }, (_, i) => request(c * 100 + i, i % 3 === 0 ? 1 : 0)), 20)));
    for (const [c, replies] of all.entries()) {
      assert.deepEqual(replies.map(([id]) => id), Array.from({ length: 20 }, (_, i) => c * 100 + i));
      assert.equal(new Set(replies.map(([, conn]) => conn)).size, 1);
    }
  });

  it('closes a connection whose stream has an impossible length and keeps serving others', async () => {
    const bad = Buffer.alloc(HEADER_SIZE);
    bad.writeInt32LE(3, 0);
    const closed = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(bad));
      socket.on('close', () => resolve(true));
      socket.on('error', () => undefined);
    });
    assert.equal(closed, true);
    assert.deepEqual((await exchange(port, [request(7, 0)], 1)).map(([id]) => id), [7]);
  });
});

describe('TcpServer with maxMessageBytes', () => {
  const server = new TcpServer({ onMessage: (conn, message) => reply(message.readInt32LE(4), conn.id), maxMessageBytes: () => HEADER_SIZE + 4 });
  let port = 0;
  before(async () => { port = await server.listen(0, '127.0.0.1'); });
  after(() => server.close());

  it('answers a message of the limit and closes the connection at the header of a longer one', async () => {
    assert.deepEqual((await exchange(port, [request(1, 0)], 1)).map(([id]) => id), [1]);
    const longer = Buffer.alloc(HEADER_SIZE + 5);
    longer.writeInt32LE(1_000_000, 0);
    const got: Buffer[] = [];
    await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(longer.subarray(0, HEADER_SIZE)));
      socket.on('data', (d: Buffer) => got.push(d));
      socket.on('close', resolve);
      socket.on('error', () => undefined);
    });
    assert.deepEqual(got, []);
  });
});

describe('TcpServer with maxConnections', () => {
  const refused: number[] = [];
  const server = new TcpServer({ onMessage: (conn, message) => reply(message.readInt32LE(4), conn.id), onRefuse: (_, open) => refused.push(open) }, 1);
  let port = 0;
  before(async () => { port = await server.listen(0, '127.0.0.1'); });
  after(() => server.close());

  it('closes a connection beyond the limit unread, and takes one again once the first has closed', async () => {
    const first = net.connect(port, '127.0.0.1');
    const firstReplied = new Promise((resolve) => first.once('data', resolve));
    first.write(request(1, 0));
    await firstReplied;
    const second = net.connect(port, '127.0.0.1');
    const secondGot: Buffer[] = [];
    second.on('data', (d: Buffer) => secondGot.push(d));
    second.on('error', () => undefined);
    second.write(request(2, 0));
    await new Promise((resolve) => second.once('close', resolve));
    assert.deepEqual(secondGot, []);
    assert.deepEqual(refused, [1]);
    const firstClosed = new Promise((resolve) => first.once('close', resolve));
    first.destroy();
    await firstClosed;
    // The server sees the close a little after the client does: until then it still refuses.
    let answered = false;
    for (let attempt = 0; attempt < 50 && !answered; attempt++) {
      answered = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(request(3, 0)));
        socket.once('data', () => { socket.destroy(); resolve(true); });
        socket.once('close', () => resolve(false));
        socket.on('error', () => undefined);
      });
      if (!answered) await sleep(10);
    }
    assert.equal(answered, true);
  });
});
