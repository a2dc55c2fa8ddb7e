import type { NodeOptions } from '../mongod_commands/command.js';
import type { RouterOptions } from '../router/router_services.js';
import { DEFAULT_MAX_ACCEPTABLE_LOGICAL_CLOCK_DRIFT_SECS } from '../sessions/logical_clock.js';
import { LOGICAL_SESSION_REFRESH_MILLIS } from '../sessions/logical_session_cache_jobs.js';

// `--setParameter name=value` for the start-up parameters a node knows (mongod's names); an
// unknown name or a bad value is refused, as mongod refuses it.
// The balancer's are read by a config server: balancerMigrationsThrottlingMs,
// autoMergerIntervalSecs and minSnapshotHistoryWindowInSeconds are MongoDB's (the pause after a
// round that moved chunks, how often the AutoMerger runs, how long a chunk must stay put before it
// is merged); balancerIdleRoundIntervalMillis is ours, for MongoDB's fixed 10 s between idle rounds.
// migrateClonePercentUnderLoad is ours too: the share of the wall clock a migration's clone may
// take while the donor serves users (src/migration/clone_pacer.ts); 100 clones flat out always.
// The clone's cost to the users is about twice its measured share (the disk it shares, its
// garbage, the catch-up that is not paced), so 7 keeps them above 0.8 of their rate where 10 did
// not reliably (docs/benchmarks.md, Migration).
// rangeDeleterBatchSize and rangeDeleterBatchDelayMS are MongoDB's. MongoDB deletes a whole range
// in one batch by default (SERVER-61637) and yields inside it; a batch here is one synchronous
// turn, so it stays small enough (~10 ms of 1 KB documents) not to stall the shard's users.
// receiveChunkWaitForRangeDeleterTimeoutMS is MongoDB's name for how long a recipient waits for
// the deletion of orphans overlapping a range it is asked to receive; docshard starts that
// deletion at once (src/migration/migration_destination_manager.ts) and waits only for the routed
// reads that still hold the range.
// ttlMonitorSleepSecs is MongoDB's: the TTL monitor's pause between passes (src/ttl), at least 1.
// maxAcceptableLogicalClockDriftSecs is MongoDB's, on every process (routers too): how far ahead
// of its wall clock a gossiped $clusterTime may be (src/sessions/logical_clock.ts), at least 1.
// logicalSessionRefreshMillis is MongoDB's (nodes and routers): how often the logical session cache
// writes its sessions to config.system.sessions and closes the cursors of sessions gone from it.
// transactionLifetimeLimitSeconds is MongoDB's: a transaction in progress longer is aborted.
// minSnapshotHistoryWindowInSeconds also sets how long a node keeps versions for snapshot reads.
// reshardingCriticalSectionTimeoutMillis is MongoDB's, read by a config server: how long a
// resharding's donors may block writes for the recipients to finish before it aborts.
export const DEFAULT_PARAMETERS: NodeOptions['parameters'] = {
  orphanCleanupDelaySecs: 900,
  balancerIdleRoundIntervalMillis: 10_000,
  balancerMigrationsThrottlingMs: 1000,
  autoMergerIntervalSecs: 3600,
  minSnapshotHistoryWindowInSeconds: 300,
  migrateClonePercentUnderLoad: 7,
  rangeDeleterBatchSize: 1024,
  rangeDeleterBatchDelayMS: 20,
  receiveChunkWaitForRangeDeleterTimeoutMS: 10_000,
  ttlMonitorSleepSecs: 60,
  maxAcceptableLogicalClockDriftSecs: DEFAULT_MAX_ACCEPTABLE_LOGICAL_CLOCK_DRIFT_SECS,
  logicalSessionRefreshMillis: LOGICAL_SESSION_REFRESH_MILLIS,
  transactionLifetimeLimitSeconds: 60,
  reshardingCriticalSectionTimeoutMillis: 5000,
};

// Parameters whose smallest value is above 0, as mongod's validators have it (a refresh every 0 ms
// would never let anything else run).
const MINIMUMS: Partial<Record<keyof NodeOptions['parameters'] | keyof RouterOptions['parameters'], number>> = {
  ttlMonitorSleepSecs: 1, logicalSessionRefreshMillis: 1, transactionLifetimeLimitSeconds: 1, reshardingCriticalSectionTimeoutMillis: 1, maxAcceptableLogicalClockDriftSecs: 1, userCacheInvalidationIntervalSecs: 1,
};

export function parseSetParameters(values: readonly string[]): NodeOptions['parameters'] {
  const out = { ...DEFAULT_PARAMETERS };
  for (const raw of values) {
    const eq = raw.indexOf('=');
    const name = eq < 0 ? raw : raw.slice(0, eq);
    const value = eq < 0 ? '' : raw.slice(eq + 1);
    if (!Object.hasOwn(DEFAULT_PARAMETERS, name)) throw new Error(`Unknown --setParameter '${name}'`);
    const key = name as keyof NodeOptions['parameters'];
    out[key] = integerParameter(key, value);
  }
  return out;
}

function integerParameter(name: keyof typeof MINIMUMS, value: string): number {
  const n = Number(value);
  if (value === '' || !Number.isInteger(n) || n < (MINIMUMS[name] ?? 0)) throw new Error(`Bad value for --setParameter ${name}: '${value}'`);
  return n;
}

// A router's: routerFastPaths (ours; true or false, 1 or 0) puts the fast paths
// (src/router/fast_paths.ts) in front of the general path; off, every command takes the general
// path, which is how CI shows that both answer alike. logicalSessionRefreshMillis and
// maxAcceptableLogicalClockDriftSecs as a node's. userCacheInvalidationIntervalSecs is mongos's (30
// by default, at least 1): how often a router with --auth asks the config server whether its users
// changed, and if so reads each logged-in connection's roles again.
const ROUTER_DEFAULT_PARAMETERS: RouterOptions['parameters'] = {
  routerFastPaths: true,
  userCacheInvalidationIntervalSecs: 30,
  logicalSessionRefreshMillis: LOGICAL_SESSION_REFRESH_MILLIS,
  maxAcceptableLogicalClockDriftSecs: DEFAULT_MAX_ACCEPTABLE_LOGICAL_CLOCK_DRIFT_SECS,
};
const BOOLEANS: Record<string, boolean> = { true: true, false: false, 1: true, 0: false };

export function parseRouterSetParameters(values: readonly string[]): RouterOptions['parameters'] {
  const out = { ...ROUTER_DEFAULT_PARAMETERS };
  for (const raw of values) {
    const eq = raw.indexOf('=');
    const name = eq < 0 ? raw : raw.slice(0, eq);
    const value = eq < 0 ? '' : raw.slice(eq + 1);
    if (!Object.hasOwn(ROUTER_DEFAULT_PARAMETERS, name)) throw new Error(`Unknown --setParameter '${name}'`);
    if (name === 'logicalSessionRefreshMillis' || name === 'maxAcceptableLogicalClockDriftSecs' || name === 'userCacheInvalidationIntervalSecs') {
      out[name] = integerParameter(name, value);
      continue;
    }
    if (!Object.hasOwn(BOOLEANS, value)) throw new Error(`Bad value for --setParameter ${name}: '${value}'`);
    out.routerFastPaths = BOOLEANS[value]!;
  }
  return out;
}
