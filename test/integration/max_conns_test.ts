import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { BSON } from 'bson';
import { MongoClient } from 'mongodb';
import type { SpawnedRouter } from '../helpers/spawn_cluster.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { frame, opMsgPayload } from '../helpers/wire_fuzz.js';
import { withNode, withProcesses } from '../helpers/fixtures.js';

// --maxConns (mongod's and mongos's net.maxIncomingConnections) on a shard and on a router: a
// connection beyond the limit is closed at once without a reply, as mongod closes it, and one
// is accepted again as soon as another has closed.

const MAX_CONNS = 3;

// One raw client connection: a command and its reply, or undefined once the server closed it.
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  private requestId = 1;
  closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d) => { this.buffer = Buffer.concat([this.buffer, d]); this.waiter?.(); });
    socket.on('close', () => { this.closed = true; this.waiter?.(); });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(s)));
      s.once('error', reject);
    });
  }

  async command(body: AnyDoc): Promise<AnyDoc | undefined> {
    this.socket.write(frame(2013, this.requestId++, opMsgPayload(Buffer.from(BSON.serialize(body)))));
    for (;;) {
      if (this.buffer.length >= 4 && this.buffer.length >= this.buffer.readInt32LE(0)) {
        const reply = this.buffer.subarray(0, this.buffer.readInt32LE(0));
        this.buffer = this.buffer.subarray(reply.length);
        return BSON.deserialize(reply.subarray(21));
      }
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => { this.waiter = resolve; });
    }
  }

  // Resolves once the server has closed the connection (the socket is gone on both sides).
  async close(): Promise<void> {
    this.socket.destroy();
    if (!this.closed) await new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
  }
}

async function connectionsOf(conn: RawConnection): Promise<{ current: number; available: number; totalCreated: number }> {
  const status = await conn.command({ serverStatus: 1, $db: 'admin' });
  return status!.connections as { current: number; available: number; totalCreated: number };
}

// Until the server has seen the earlier close: its 'close' event can trail the client's by a turn.
async function openAccepted(port: number): Promise<RawConnection> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const conn = await RawConnection.open(port);
    if ((await conn.command({ hello: 1, $db: 'admin' })) !== undefined) return conn;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no connection accepted');
}

function checkLimit(target: () => number): void {
  it(`closes a connection beyond ${MAX_CONNS} without a reply, and accepts one again after another closes`, async () => {
    const open = [];
    for (let i = 0; i < MAX_CONNS; i++) open.push(await openAccepted(target()));
    const before = await connectionsOf(open[0]!);
    assert.equal(before.current, MAX_CONNS);
    assert.equal(before.available, 0);

    const over = await RawConnection.open(target());
    assert.equal(await over.command({ hello: 1, $db: 'admin' }), undefined);
    assert.equal(over.closed, true);

    await open.pop()!.close();
    const again = await openAccepted(target());
    const connections = await connectionsOf(again);
    assert.equal(connections.current, MAX_CONNS);
    assert.equal(connections.available, 0);
    // The refused connection was never created, as in mongod.
    assert.equal(connections.totalCreated, before.totalCreated + 1);
    for (const c of [...open, again]) await c.close();
  });

  it('serves the official driver within the limit', async () => {
    // One monitoring connection (poll mode: no separate RTT connection) and a pool of two.
    const client = new MongoClient(`mongodb://127.0.0.1:${target()}/?directConnection=true`, { maxPoolSize: MAX_CONNS - 1, serverMonitoringMode: 'poll' });
    try {
      const coll = client.db('maxconns').collection('c');
      await Promise.all(Array.from({ length: 20 }, (_, i) => coll.insertOne({ _id: i } as AnyDoc)));
      assert.equal(await coll.countDocuments(), 20);
      const status = await client.db('admin').command({ serverStatus: 1 });
      assert.ok(status.connections.current <= MAX_CONNS);
      assert.equal(status.connections.available, MAX_CONNS - status.connections.current);
    } finally {
      await client.close();
    }
  });
}

describe('--maxConns on a shard', () => {
  let node: SpawnedNode;
  withNode({ extraArgs: ['--maxConns', String(MAX_CONNS)] }, (f) => { node = f.node; });
  checkLimit(() => node.port);
});

describe('--maxConns on a router', () => {
  let config: SpawnedNode;
  let shard: SpawnedNode;
  let router: SpawnedRouter;
  withProcesses(async (p) => {
    config = await p.node({ role: 'config' });
    router = await p.router(config.port, ['--maxConns', String(MAX_CONNS)]);
    shard = await p.node();
    const admin = new MongoClient(`mongodb://127.0.0.1:${router.port}/`, { maxPoolSize: 1, serverMonitoringMode: 'poll' });
    try {
      await admin.db('admin').command({ addShard: `127.0.0.1:${shard.port}` });
    } finally {
      await admin.close();
    }
  });
  checkLimit(() => router.port);
});
