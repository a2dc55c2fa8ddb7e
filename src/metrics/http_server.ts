import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsRegistry } from './prometheus_registry.js';

// A process's HTTP port (--httpPort): GET /metrics for Prometheus, and on a router the console's
// routes (`routes`, tried first for anything else). It binds where the process's wire port binds.

// Answers the request and returns true, or returns false to leave it to the next handler.
export type HttpRoutes = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface RunningHttpServer {
  port: number;
  close(): Promise<void>;
}

export async function startHttpServer(port: number, bindIp: string, metrics: MetricsRegistry, routes?: HttpRoutes): Promise<RunningHttpServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      metrics.text().then((text) => {
        res.writeHead(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      }, (err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`metrics failed: ${(err as Error).message}\n`);
      });
      return;
    }
    if (routes?.(req, res) === true) return;
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, bindIp, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      // Event streams stay open until their clients leave: end them, or close would wait for them.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
