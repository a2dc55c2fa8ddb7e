import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { WireClient } from './client.js';
import { parseOpMsg, readHeader } from './message.js';
import { opMsgReply } from '../../test/helpers/wire_fuzz.js';
import { TcpServer } from './tcp_server.js';

// An echo server whose requests script its misbehaviour: {delayMs}, {close}, {wrongResponseTo},
// and replies of other shapes: {checksum} (flag and trailing checksum), {headerOnly}, {badSection}.
class EchoServer {
  active = 0;
  maxActive = 0;
  readonly connectionIds = new Set<number>();
  readonly server = new TcpServer({
    onMessage: async (conn, message) => {
      const header = readHeader(message);
      const body = deserializeDocument(parseOpMsg(header, message).body);
      this.connectionIds.add(conn.id);
      this.active += 1;
      this.maxActive = Math.max(this.maxActive, this.active);
      try {
        if (typeof body.delayMs === 'number') await sleep(body.delayMs);
        if (body.close) throw new Error('closing as asked');
        const responseTo = body.wrongResponseTo ? header.requestId + 1000 : header.requestId;
        const reply: Doc = body.fail
          ? { ok: 0, errmsg: 'asked to fail', code: ErrorCodes.BadValue, codeName: 'BadValue' }
          : { ok: 1, echo: body, connectionId: conn.id };
        const message = opMsgReply(serializeDocument(reply), 1, responseTo);
        if (body.checksum) {
          const withSum = Buffer.concat([message, Buffer.alloc(4)]);
          withSum.writeInt32LE(withSum.length, 0);
          withSum.writeUInt32LE(1, 16);
          return withSum;
        }
        if (body.headerOnly) {
          const header = Buffer.from(message.subarray(0, 16));
          header.writeInt32LE(16, 0);
          return header;
        }
        if (body.badSection) message[20] = 7;
        return message;
      } finally {
        this.active -= 1;
      }
    },
  });
  port = 0;

  async start(port = 0): Promise<string> {
    this.port = await this.server.listen(port, '127.0.0.1');
    return `127.0.0.1:${this.port}`;
  }
}

async function unusedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function isMongoError(code: number) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof MongoError, `expected a MongoError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  };
}

describe('WireClient', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(options?: ConstructorParameters<typeof WireClient>[0]): Promise<{ echo: EchoServer; host: string; client: WireClient }> {
    const echo = new EchoServer();
    const host = await echo.start();
    const client = new WireClient(options);
    cleanups.push(() => echo.server.close(), () => client.close());
    return { echo, host, client };
  }

  it('sends a command with $db and returns the decoded reply', async () => {
    const { host, client } = await setup();
    const reply = await client.command(host, 'admin', { ping: 1, n: 7 });
    assert.equal(reply.ok, 1);
    assert.deepEqual(reply.echo, { ping: 1, n: 7, $db: 'admin' });
  });

  it('returns ok: 0 replies instead of throwing them', async () => {
    const { host, client } = await setup();
    const reply = await client.command(host, 'test', { fail: 1 });
    assert.equal(reply.ok, 0);
    assert.equal(reply.code, ErrorCodes.BadValue);
  });

  it('forwards raw BSON bytes and hands back the reply bytes', async () => {
    const { host, client } = await setup();
    const bytes = await client.commandRaw(host, 'test', serializeDocument({ find: 'c', $db: 'test' }));
    assert.ok(Buffer.isBuffer(bytes));
    assert.deepEqual(deserializeDocument(bytes).echo, { find: 'c', $db: 'test' });
  });

  it('runs concurrent commands on up to maxConnectionsPerHost connections and matches each reply to its request', async () => {
    const { echo, host, client } = await setup({ maxConnectionsPerHost: 4 });
    const replies = await Promise.all(
      Array.from({ length: 24 }, (_, i) => client.command(host, 'test', { echo: i, delayMs: (i * 7) % 30 })),
    );
    replies.forEach((reply, i) => assert.equal((reply.echo as Doc).echo, i));
    assert.equal(echo.maxActive, 4);
    assert.equal(echo.connectionIds.size, 4);
  });

  it('reuses an idle connection for the next command', async () => {
    const { echo, host, client } = await setup();
    await client.command(host, 'test', { ping: 1 });
    await client.command(host, 'test', { ping: 1 });
    assert.equal(echo.connectionIds.size, 1);
  });

  it('fails a reply that answers another request with SocketException and drops that connection', async () => {
    const { host, client } = await setup();
    const first = await client.command(host, 'test', { ping: 1 });
    await assert.rejects(client.command(host, 'test', { wrongResponseTo: 1 }), isMongoError(ErrorCodes.SocketException));
    const after = await client.command(host, 'test', { ping: 1 });
    assert.notEqual(after.connectionId, first.connectionId);
  });

  it('reads a reply with flags and a checksum, and fails a reply it cannot read with SocketException', async () => {
    const { host, client } = await setup();
    assert.equal(((await client.command(host, 'test', { checksum: true })).echo as Doc).checksum, true);
    await assert.rejects(client.command(host, 'test', { headerOnly: true }), isMongoError(ErrorCodes.SocketException));
    await assert.rejects(client.command(host, 'test', { badSection: true }), isMongoError(ErrorCodes.SocketException));
    assert.equal((await client.command(host, 'test', { ping: 1 })).ok, 1);
  });

  it('fails a command that outlives its timeout with NetworkTimeout and drops that connection', async () => {
    const { host, client } = await setup();
    const first = await client.command(host, 'test', { ping: 1 });
    await assert.rejects(client.command(host, 'test', { delayMs: 500 }, { timeoutMs: 50 }), isMongoError(ErrorCodes.NetworkTimeout));
    const after = await client.command(host, 'test', { ping: 1 });
    assert.notEqual(after.connectionId, first.connectionId);
  });

  it('times out a command still waiting for a busy pool', async () => {
    const { host, client } = await setup({ maxConnectionsPerHost: 1 });
    const slow = client.command(host, 'test', { delayMs: 300 });
    await assert.rejects(client.command(host, 'test', { ping: 1 }, { timeoutMs: 50 }), isMongoError(ErrorCodes.NetworkTimeout));
    assert.equal((await slow).ok, 1);
  });

  it('fails a command whose connection the server closes mid-request with HostUnreachable, then reconnects', async () => {
    const { host, client } = await setup();
    await assert.rejects(client.command(host, 'test', { close: 1, delayMs: 20 }), isMongoError(ErrorCodes.HostUnreachable));
    assert.equal((await client.command(host, 'test', { ping: 1 })).ok, 1);
  });

  it('fails with HostUnreachable when nothing listens on the port', async () => {
    const client = new WireClient();
    cleanups.push(() => client.close());
    const port = await unusedPort();
    await assert.rejects(client.command(`127.0.0.1:${port}`, 'admin', { ping: 1 }), isMongoError(ErrorCodes.HostUnreachable));
  });

  it('reconnects after the server restarts on the same port', async () => {
    const { echo, host, client } = await setup();
    assert.equal((await client.command(host, 'test', { ping: 1 })).ok, 1);
    await echo.server.close();
    await sleep(20); // lets the client see its idle connection close
    const restarted = new EchoServer();
    await restarted.start(echo.port);
    cleanups.push(() => restarted.server.close());
    assert.equal((await client.command(host, 'test', { ping: 1 })).ok, 1);
    assert.equal(restarted.connectionIds.size, 1);
  });

  it('fails commands in flight and later ones with ShutdownInProgress once closed', async () => {
    const { host, client } = await setup();
    const inFlight = client.command(host, 'test', { delayMs: 200 });
    await sleep(20);
    await client.close();
    await assert.rejects(inFlight, isMongoError(ErrorCodes.ShutdownInProgress));
    await assert.rejects(client.command(host, 'test', { ping: 1 }), isMongoError(ErrorCodes.ShutdownInProgress));
  });

  it('rejects a host that is not host:port with FailedToParse', async () => {
    const client = new WireClient();
    await assert.rejects(client.command('localhost', 'admin', { ping: 1 }), isMongoError(ErrorCodes.FailedToParse));
  });
});
