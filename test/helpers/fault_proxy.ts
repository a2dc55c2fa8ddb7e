import net from 'node:net';
import { deserializeDocument } from '../../src/bson/values.js';

// A TCP proxy in front of a router or node that loses replies: for a request whose command
// `shouldDrop` picks, the reply never reaches the client and both connections are closed, as a
// network failure after the server did the work. Everything else passes untouched. What the client
// then does (a retryable write is retried once, on a new connection) is what the tests watch.
export interface FaultProxy {
  port: number;
  uri: string;
  // Replies dropped so far, by command name.
  dropped: Map<string, number>;
  stop(): Promise<void>;
}

// `command` is the request's command name; `seq` counts requests of that name through the proxy.
export type DropRule = (command: string, seq: number) => boolean;

export async function startFaultProxy(targetPort: number, shouldDrop: DropRule): Promise<FaultProxy> {
  const dropped = new Map<string, number>();
  const seen = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    // requestId -> the command name, for requests whose reply is to be lost.
    const doomed = new Map<number, string>();
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    frames(client, (message) => {
      const name = commandName(message);
      if (name !== undefined) {
        const seq = (seen.get(name) ?? 0) + 1;
        seen.set(name, seq);
        if (shouldDrop(name, seq)) doomed.set(message.readInt32LE(4), name);
      }
      upstream.write(message);
    });
    frames(upstream, (message) => {
      const name = doomed.get(message.readInt32LE(8));
      if (name === undefined) {
        client.write(message);
        return;
      }
      dropped.set(name, (dropped.get(name) ?? 0) + 1);
      close();
    });
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    uri: `mongodb://127.0.0.1:${port}/`,
    dropped,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Calls `onMessage` with each whole wire message read from `socket`.
function frames(socket: net.Socket, onMessage: (message: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
      const size = pending.readInt32LE(0);
      onMessage(pending.subarray(0, size));
      pending = pending.subarray(size);
    }
  });
}

// The first field's name of an OP_MSG body (opCode 2013, flags, section kind 0).
function commandName(message: Buffer): string | undefined {
  if (message.length < 21 || message.readInt32LE(12) !== 2013 || message[20] !== 0) return undefined;
  try {
    const body = message.subarray(21, 21 + message.readInt32LE(21));
    return Object.keys(deserializeDocument(body))[0];
  } catch {
    return undefined;
  }
}
