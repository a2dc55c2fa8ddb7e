import net from 'node:net';
import { deserializeDocument, type Doc } from '../../src/bson/values.js';
import { parseRequest } from '../../src/wire/message.js';

// A TCP proxy in front of a node that keeps every OP_MSG command sent through it as the node
// reads it (the body, and each document sequence as the field it names): what a shard added by
// the proxy's address received from routers and the config server. Bytes pass untouched.
export interface RecordingProxy {
  port: number;
  commands: Doc[];
  stop(): Promise<void>;
}

export async function startRecordingProxy(targetPort: number): Promise<RecordingProxy> {
  const commands: Doc[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
        record(commands, pending.subarray(0, pending.readInt32LE(0)));
        pending = pending.subarray(pending.readInt32LE(0));
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    commands,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function record(commands: Doc[], message: Buffer): void {
  const request = parseRequest(message);
  if (request.kind !== 'msg') return;
  const cmd = deserializeDocument(request.body);
  for (const { identifier, documents } of request.sequences) cmd[identifier] = documents.map(deserializeDocument);
  commands.push(cmd);
}
