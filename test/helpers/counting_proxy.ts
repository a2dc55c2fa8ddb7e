import net from 'node:net';

// A proxy that counts the opCodes of the messages passing each way.
export async function countingProxy(targetPort: number): Promise<{ port: number; sent: Map<number, number>; received: Map<number, number>; stop(): void }> {
  const sent = new Map<number, number>();
  const received = new Map<number, number>();
  const count = (into: Map<number, number>) => {
    let pending = Buffer.alloc(0);
    return (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 16 && pending.length >= pending.readInt32LE(0)) {
        into.set(pending.readInt32LE(12), (into.get(pending.readInt32LE(12)) ?? 0) + 1);
        pending = pending.subarray(pending.readInt32LE(0));
      }
    };
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', count(sent));
    upstream.on('data', count(received));
    client.pipe(upstream);
    upstream.pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    sent,
    received,
    stop() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
