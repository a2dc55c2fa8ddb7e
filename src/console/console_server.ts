import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Doc } from '../bson/values.js';
import { commandMetricsOf, opLatencies } from '../metrics/command_metrics.js';
import type { HttpRoutes } from '../metrics/http_server.js';
import { operationsInFlightOf } from '../command_layer/operations_in_flight.js';
import type { RouterServices } from '../router/router_services.js';
import { ClusterPoller } from './cluster_poller.js';
import { balancerPanel, collectionsPanel, emptySeries, migrationsPanel, operationsPanel, shardMapPanel, throughputPanel, topologyPanel, type SeriesState } from './console_view.js';
import { keyRangeHeatOf, type KeyRangeHeat } from './key_range_heat.js';
import { changedPanels, sseEvent } from './snapshot_diff.js';
import type { Timer } from '../base/clock.js';

// The console a router serves on its HTTP port: the page and its static files, one event stream
// (/events) that sends each panel when it changes, and POST /kill, which runs killOp. The cluster
// is looked at once a second while at least one page is open, and not at all otherwise.

const POLL_INTERVAL_MS = 1000;
const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');
const require = createRequire(import.meta.url);

const FILES: Record<string, { file: () => string; type: string }> = {
  '/': { file: () => path.join(STATIC_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  '/console.js': { file: () => path.join(STATIC_DIR, 'console.js'), type: 'text/javascript; charset=utf-8' },
  '/console.css': { file: () => path.join(STATIC_DIR, 'console.css'), type: 'text/css; charset=utf-8' },
  // uPlot, as its package ships it: no build step.
  '/uPlot.iife.min.js': { file: () => require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  '/uPlot.min.css': { file: () => require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

interface Viewer {
  res: ServerResponse;
  // What this page has been sent of each panel.
  sent: Map<string, string>;
}

export function consoleRoutes(router: RouterServices): HttpRoutes {
  const hub = new ConsoleHub(router);
  const cache = new Map<string, Buffer>();
  return (req, res) => {
    const url = (req.url ?? '/').split('?')[0]!;
    const file = FILES[url];
    if (file !== undefined && req.method === 'GET') {
      let body = cache.get(url);
      if (body === undefined) cache.set(url, body = readFileSync(file.file()));
      res.writeHead(200, { 'Content-Type': file.type, 'Cache-Control': 'no-cache' });
      res.end(body);
      return true;
    }
    if (url === '/events' && req.method === 'GET') {
      hub.subscribe(req, res);
      return true;
    }
    if (url === '/kill' && req.method === 'POST') {
      kill(router, req, res);
      return true;
    }
    return false;
  };
}

class ConsoleHub {
  private readonly viewers = new Set<Viewer>();
  private readonly poller: ClusterPoller;
  private readonly heat: KeyRangeHeat;
  private readonly series: SeriesState = emptySeries();
  private timer: Timer | undefined;
  private polling = false;

  constructor(private readonly router: RouterServices) {
    this.poller = new ClusterPoller(router);
    this.heat = keyRangeHeatOf(router);
  }

  subscribe(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    const viewer = { res, sent: new Map<string, string>() };
    this.viewers.add(viewer);
    req.on('close', () => {
      this.viewers.delete(viewer);
      if (this.viewers.size === 0) this.stop();
    });
    if (this.timer === undefined) this.start();
  }

  private start(): void {
    this.heat.active = true;
    this.timer = this.router.wallClock.setRepeatingTimer(POLL_INTERVAL_MS, () => void this.tick());
    void this.tick();
  }

  private stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.heat.active = false;
  }

  // One look; a look that takes longer than the interval makes the next one wait for it.
  private async tick(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const panels = await this.panels();
      for (const viewer of this.viewers) {
        for (const { panel, json } of changedPanels(viewer.sent, panels)) viewer.res.write(sseEvent(panel, json));
      }
    } catch (err) {
      this.router.logger.warn({ c: 'CONSOLE', err }, 'Could not look at the cluster');
      for (const viewer of this.viewers) viewer.res.write(sseEvent('failure', JSON.stringify({ message: (err as Error).message })));
    } finally {
      this.polling = false;
    }
  }

  private async panels(): Promise<Record<string, unknown>> {
    const s = await this.poller.sample();
    const nodes = [
      { name: 'router', opLatencies: opLatencies(commandMetricsOf(this.router), true) as unknown as Doc },
      ...s.shards.map((sh) => ({ name: sh.name, opLatencies: sh.status?.opLatencies as Doc | undefined })),
    ];
    return {
      topology: topologyPanel(s),
      balancer: balancerPanel(s),
      collections: collectionsPanel(s),
      shardMap: shardMapPanel(s),
      migrations: migrationsPanel(s),
      throughput: throughputPanel(this.series, s.timeMs, nodes),
      operations: operationsPanel(operationsInFlightOf(this.router).list(this.router.wallClock.now()), s.shards),
      heat: this.heat.view(this.router.wallClock.now()),
    };
  }
}

// The kill button: killOp of a router operation, as a client would run it. The JSON content type
// keeps other sites' pages out (a cross-origin request with it needs a preflight nobody answers).
function kill(router: RouterServices, req: IncomingMessage, res: ServerResponse): void {
  const answer = (status: number, body: Doc): void => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
    answer(415, { ok: 0, errmsg: 'expected application/json' });
    return;
  }
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => { text += chunk; });
  req.on('end', () => {
    let opid: unknown;
    try {
      opid = (JSON.parse(text) as { opid?: unknown }).opid;
    } catch {
      answer(400, { ok: 0, errmsg: 'body is not JSON' });
      return;
    }
    const killOp = router.commands.get('killOp')!;
    Promise.resolve()
      .then(() => killOp.run({ router, conn: { id: 0, remote: req.socket.remoteAddress ?? '', local: '' }, db: 'admin' }, { killOp: 1, op: opid, $db: 'admin' }))
      .then((reply) => answer(200, reply), (err: unknown) => answer(400, { ok: 0, errmsg: (err as Error).message }));
  });
}
