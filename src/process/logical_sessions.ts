import type { MongodServices } from '../mongod_commands/command.js';
import type { RouterServices } from '../router/router_services.js';
import { shardSessionsCollection } from '../configsvr/sessions_collection_config_server.js';
import { startLogicalSessionCacheJobs, type LogicalSessionCacheJobs } from '../sessions/logical_session_cache_jobs.js';
import { sessionKey, type LogicalSessionId } from '../sessions/session_id.js';
import { LocalSessionsCollection, type SessionsCollection } from '../sessions/sessions_collection.js';
import { SessionsCollectionSharded } from '../sessions/sessions_collection_sharded.js';
import { reapSessionsOlderThan, TRANSACTION_RECORD_MINIMUM_LIFETIME_MS } from '../sessions/transaction_reaper.js';

// Where a node's LogicalSessionCache finds config.system.sessions: on the config server, its own
// (sharded on {_id: 1} in one chunk there); on a shard of a cluster, the config server's; on a node
// outside a cluster, its own, as a standalone mongod keeps one. The cache's jobs refresh it and
// reap the retryable-write records of sessions gone from it.
export function startNodeSessionJobs(node: MongodServices): LogicalSessionCacheJobs {
  const local = new LocalSessionsCollection(node.storage, node.wallClock);
  if (node.options.role === 'config') shardSessionsCollection(node.local, local.setup(), node.wallClock.now());
  const sessionsCollection = (): SessionsCollection => {
    const configHost = node.options.role === 'shard' ? node.sharding.state.configHost : undefined;
    return configHost === undefined ? local : new SessionsCollectionSharded(node.client, configHost);
  };
  return startLogicalSessionCacheJobs(node.sessions, {
    sessionsCollection,
    service: {
      openCursorSessions: () => node.cursors.sessions(),
      activeOpSessions: () => node.sessionKiller.activeSessions(),
      killCursorsWithMatchingSessions: (matcher) => node.cursors.killCursorsWithMatchingSessions(matcher),
    },
    reap: (sessions) => {
      const running = new Set(node.sessionKiller.activeSessions().map(sessionKey));
      const inUse = (lsid: LogicalSessionId): boolean => running.has(sessionKey(lsid)) || node.sessions.isActive(lsid);
      return reapSessionsOlderThan(node.storage, node.sessionCatalog, sessions, new Date(node.wallClock.now() - TRANSACTION_RECORD_MINIMUM_LIFETIME_MS), inUse);
    },
    periodMs: node.options.parameters.logicalSessionRefreshMillis,
    logger: node.logger,
    clock: node.wallClock,
    mayWrite: () => node.replication?.isWritablePrimary() ?? true,
  });
}

// A router's cache writes to the config server's config.system.sessions and keeps no records.
export function startRouterSessionJobs(router: RouterServices): LogicalSessionCacheJobs {
  const sessions = new SessionsCollectionSharded(router.client, router.options.configHost);
  return startLogicalSessionCacheJobs(router.sessions, {
    sessionsCollection: () => sessions,
    service: {
      openCursorSessions: () => router.cursors.sessions(),
      activeOpSessions: () => router.sessionKiller.activeSessions(),
      killCursorsWithMatchingSessions: (matcher) => router.cursors.killCursorsWithMatchingSessions(matcher),
    },
    periodMs: router.options.parameters.logicalSessionRefreshMillis,
    logger: router.logger,
    clock: router.wallClock,
  });
}
