import { createServer } from 'node:net';

// A port nobody listens on now, for a flag that takes no 0 (a process's --httpPort is reported
// only in its log). Another process could take it before the caller does; on loopback in a test
// run that is rare enough.
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
