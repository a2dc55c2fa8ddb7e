import { Binary } from 'bson';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ConfigServerServices, MongodServices, ShardServices } from '../mongod_commands/command.js';
import { withHeatTracking } from '../console/heat_targeting.js';
import { SERVER_VERSION } from '../command_layer/server_description.js';
import type { MessageHandler } from '../command_layer/message_handler.js';
import { migrationStatistics } from '../migration/migration_statistics.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON } from '../migration/range_deletion_task.js';
import { commandMetricsOf } from '../metrics/command_metrics.js';
import { startHttpServer, type HttpRoutes, type RunningHttpServer } from '../metrics/http_server.js';
import { requestDocument, withCommandMetrics } from '../metrics/message_metrics.js';
import { slowOperationObserver, slowOperationSettingsOf, type SlowOperationReport } from '../metrics/slow_operations.js';
import { redactedForLog } from '../auth/authorization_policy.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import type { CollectionFigures, ConfigFigures, ProcessSources, ReplicationFigures, RouterFigures, ShardFigures } from '../metrics/process_metrics.js';
import { OplogReads } from '../oplog/oplog_reads.js';
import { memberViews } from '../replication/member_views.js';
import type { ReplicationCoordinator } from '../replication/replication_coordinator.js';
import { MetricsRegistry } from '../metrics/prometheus_registry.js';
import { operationsInFlightOf } from '../command_layer/operations_in_flight.js';
import type { RouterServices } from '../router/router_services.js';

// Where a process's metrics come from (src/metrics knows none of its services) and its HTTP port.

const INTERNAL_DBS = new Set(['admin', 'config', 'local']);

// A node's message handler, its commands counted (src/metrics/message_metrics.ts), the slow ones
// logged (src/metrics/slow_operations.ts), and each registered while it runs (currentOp).
export function instrumentNode(services: MongodServices, handler: MessageHandler): MessageHandler {
  const slow = slowOperationObserver(slowOperationSettingsOf(services), slowOperationReporter(services.logger), () => services.logger.isLevelEnabled('debug'));
  return withCommandMetrics(commandMetricsOf(services), (name) => canonicalName(services.commands, name), operationsInFlightOf(services).wrap(handler), slow);
}

// A router's message handler, its commands counted and the slow ones logged, each registered
// while it runs (killOp), and targeted for the console's heat map while a console is open.
export function instrumentRouter(router: RouterServices, handler: MessageHandler): MessageHandler {
  const slow = slowOperationObserver(slowOperationSettingsOf(router), slowOperationReporter(router.logger), () => router.logger.isLevelEnabled('debug'));
  return withCommandMetrics(commandMetricsOf(router), (name) => canonicalName(router.commands, name), operationsInFlightOf(router).wrap(withHeatTracking(router, handler)), slow);
}

// A hello that waits for a topology change (maxAwaitTimeMS) is slow on purpose.
const AWAITABLE = new Set(['hello', 'isMaster', 'ismaster']);
// What a SASL conversation carries is left out of the log, and so is a long command's body.
const CONVERSATION = new Set(['saslStart', 'saslContinue', 'authenticate']);
const LOGGED_COMMAND_BYTES = 10_000;

// A slow request's line, in the shape of MongoDB's "Slow query" (id 51803): its namespace, its
// command (a password as "xxx"), how long it took and whether it succeeded. One that was not slow,
// reported at logLevel 1 and above, is a debug line.
function slowOperationReporter(logger: Logger): SlowOperationReport {
  return (message, durationMillis, ok, slow) => {
    const bytes = requestDocument(message);
    const cmd = bytes === undefined ? undefined : decodedRequest(bytes);
    if (bytes === undefined || cmd === undefined) return;
    const name = Object.keys(cmd)[0] ?? '';
    if (AWAITABLE.has(name) && cmd.maxAwaitTimeMS !== undefined) return;
    const target = cmd[name];
    const ns = `${typeof cmd.$db === 'string' ? cmd.$db : 'admin'}.${typeof target === 'string' ? target : '$cmd'}`;
    const command = CONVERSATION.has(name) || bytes.length > LOGGED_COMMAND_BYTES
      ? { [name]: typeof target === 'object' ? '...' : target, commandBytes: bytes.length }
      : redactedForLog(name, cmd);
    const line = { c: 'COMMAND', id: 51803, type: 'command', ns, command, durationMillis, ok: ok ? 1 : 0 };
    if (slow) logger.info(line, 'Slow query');
    else logger.debug(line, 'Slow query');
  };
}

// A request its handler refused as invalid BSON is not logged.
function decodedRequest(bytes: Buffer): Doc | undefined {
  try {
    return deserializeDocument(bytes);
  } catch {
    return undefined;
  }
}

// A command's first name in the table (findandmodify counts as findAndModify), or "unknown".
function canonicalName(table: ReadonlyMap<string, { names: readonly string[] }>, received: string): string {
  return table.get(received)?.names[0] ?? 'unknown';
}

export async function serveNodeHttp(services: ShardServices | ConfigServerServices, httpPort: number, logger: Logger): Promise<RunningHttpServer> {
  return serve(nodeSources(services), httpPort, services.options.bindIp, logger);
}

export async function serveRouterHttp(router: RouterServices, httpPort: number, logger: Logger, routes?: HttpRoutes): Promise<RunningHttpServer> {
  return serve(routerSources(router), httpPort, router.options.bindIp, logger, routes);
}

async function serve(sources: ProcessSources, httpPort: number, bindIp: string, logger: Logger, routes?: HttpRoutes): Promise<RunningHttpServer> {
  const server = await startHttpServer(httpPort, bindIp, new MetricsRegistry(sources), routes);
  logger.info({ c: 'NETWORK', httpPort: server.port, bindIp }, 'Serving HTTP');
  return server;
}

function nodeSources(services: ShardServices | ConfigServerServices): ProcessSources {
  return {
    role: services.role,
    version: SERVER_VERSION,
    commands: commandMetricsOf(services),
    connections: () => ({ current: services.counters.connectionsCurrent, created: services.counters.connectionsTotal }),
    cursorsOpen: () => services.cursors.openCount,
    storageSizeBytes: () => dataFileBytes(services.options.dbpath),
    ...(services.role === 'shard' ? { shard: () => shardFigures(services) } : { config: () => configFigures(services) }),
    ...(services.replication === undefined ? {} : { replication: replicationFigures(services.replication, new OplogReads(services.storage)) }),
  };
}

// A member's view of its set, read when scraped; the elections it won are counted from the moment
// the metrics are served (as the process starts), each time the member turns leader.
function replicationFigures(replication: ReplicationCoordinator, oplog: OplogReads): () => ReplicationFigures | undefined {
  let electionsWon = 0;
  let leader = false;
  replication.onProgress(() => {
    const now = replication.state()?.role === 'leader';
    if (now && !leader) electionsWon += 1;
    leader = now;
  });
  return () => {
    const s = replication.state();
    if (s === null) return undefined;
    return { set: s.config._id, term: s.term, electionsWon, oplogWindowSeconds: oplog.windowSeconds(), members: memberViews(s) };
  };
}

function routerSources(router: RouterServices): ProcessSources {
  return {
    role: 'router',
    version: SERVER_VERSION,
    commands: commandMetricsOf(router),
    connections: () => ({ current: router.connections.current, created: router.connections.total }),
    cursorsOpen: () => router.cursors.openCount,
    router: () => {
      const s = router.catalogCache.statistics;
      return {
        catalogCacheRefreshes: { incremental: s.incrementalRefreshes, full: s.fullRefreshes },
        staleConfigRetries: s.staleConfigRetries,
        fastPaths: { ...router.fastPaths },
        monitoredMembers: monitoredMembers(router.replicaSets?.() ?? {}),
      };
    },
  };
}

// connPoolStats's view of the sets (src/client/conn_pool_stats.ts), one entry per member.
function monitoredMembers(replicaSets: Doc): RouterFigures['monitoredMembers'] {
  return Object.entries(replicaSets).flatMap(([set, view]) => ((view as Doc).hosts as Doc[]).map((h) => ({
    set,
    host: String(h.addr),
    role: h.ok !== true ? 'unknown' as const : h.ismaster === true ? 'primary' as const : h.secondary === true ? 'secondary' as const : 'other' as const,
    rttSeconds: Number(h.pingTimeMillis) / 1000,
  })));
}

// LMDB's files (data.mdb, lock.mdb), which hold everything the node stores.
function dataFileBytes(dbpath: string): number {
  let bytes = 0;
  for (const name of readdirSync(dbpath)) if (name.endsWith('.mdb')) bytes += statSync(path.join(dbpath, name)).size;
  return bytes;
}

// A shard's collections as collStats counts them (every document stored, orphans included, and
// the orphans its range deletion tasks count), its migration counters and its tasks.
function shardFigures(services: MongodServices): ShardFigures {
  const tasks = services.local.find(RANGE_DELETIONS_NS).map(rangeDeletionTaskFromBSON);
  const orphans = new Map<string, { docs: number; bytes: number }>();
  for (const t of tasks) {
    const o = orphans.get(t.nss) ?? orphans.set(t.nss, { docs: 0, bytes: 0 }).get(t.nss)!;
    o.docs += t.numOrphanDocs;
    o.bytes += t.orphanedSizeBytes;
  }
  const collections: CollectionFigures[] = [];
  for (const coll of services.storage.listCollections()) {
    if (INTERNAL_DBS.has(coll.ns.slice(0, coll.ns.indexOf('.')))) continue;
    const { count, size } = services.storage.stats.get(coll.entry.id);
    const o = orphans.get(coll.ns);
    collections.push({ ns: coll.ns, documents: count, bytes: size, orphanedDocuments: o?.docs ?? 0, orphanedBytes: o?.bytes ?? 0 });
  }
  const m = migrationStatistics(services);
  const pending = tasks.filter((t) => t.pending).length;
  return {
    shard: services.sharding.state.shardName ?? '',
    collections,
    migrations: {
      donorStarted: m.countDonorMoveChunkStarted, donorCommitted: m.countDonorMoveChunkCommitted, donorAborted: m.countDonorMoveChunkAborted,
      recipientStarted: m.countRecipientMoveChunkStarted, clonedDocuments: m.countDocsClonedOnRecipient, clonedBytes: m.countBytesClonedOnRecipient,
    },
    rangeDeletionTasks: { pending, ready: tasks.length - pending },
  };
}

// The config server's catalog: chunks per collection and owning shard, the shards, the balancer.
function configFigures(services: ConfigServerServices): ConfigFigures {
  const names = new Map<string, string>();
  for (const c of services.local.find('config.collections')) names.set(uuidKey(c.uuid), String(c._id));
  const counts = new Map<string, { ns: string; shard: string; count: number }>();
  for (const chunk of services.local.find('config.chunks')) {
    const ns = names.get(uuidKey(chunk.uuid)) ?? String(chunk.ns ?? 'unknown');
    const shard = String(chunk.shard);
    const key = `${ns}\u0000${shard}`;
    const entry = counts.get(key) ?? counts.set(key, { ns, shard, count: 0 }).get(key)!;
    entry.count += 1;
  }
  const status = services.balancer.status();
  return {
    chunks: [...counts.values()],
    shards: services.local.find('config.shards').map((s) => ({ name: String(s._id), draining: s.draining === true })),
    balancer: { enabled: status.mode === 'full', roundRunning: status.inBalancerRound === true, rounds: Number(status.numBalancerRounds) },
  };
}

function uuidKey(uuid: unknown): string {
  return uuid instanceof Binary ? uuid.toString('hex') : String(uuid);
}
