import type { Logger } from 'pino';
import type { LogicalSessionCache, ServiceLiaison } from './logical_session_cache.js';
import type { SessionsCollection } from './sessions_collection.js';
import type { Clock, Timer } from '../base/clock.js';

// MongoDB's logicalSessionRefreshMillis default: five minutes between refreshes.
export const LOGICAL_SESSION_REFRESH_MILLIS = 300_000;

export interface LogicalSessionCacheJobOptions {
  // Where config.system.sessions is for this process now (a shard finds out when it is added).
  sessionsCollection(): SessionsCollection;
  service: ServiceLiaison;
  // A node's transaction reaper (transaction_reaper.ts); a router keeps no session records.
  reap?(sessions: SessionsCollection): Promise<number>;
  // logicalSessionRefreshMillis.
  periodMs: number;
  logger: Logger;
  clock: Clock;
  // False while the process may not write its sessions (a replica-set member that is not primary):
  // the round is skipped, as MongoDB's jobs run on the primary only.
  mayWrite?: () => boolean;
}

export interface LogicalSessionCacheJobs {
  stop(): Promise<void>;
}

// MongoDB's LogicalSessionCacheRefresh and LogicalSessionCacheReap jobs: every periodMs a refresh,
// then a reap, one round at a time. A failed round is logged and tried again at the next.
export function startLogicalSessionCacheJobs(cache: LogicalSessionCache, options: LogicalSessionCacheJobOptions): LogicalSessionCacheJobs {
  const { logger } = options;
  let timer: Timer | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopped = false;
  const runRound = async (): Promise<void> => {
    if (options.mayWrite?.() === false) return;
    const sessions = options.sessionsCollection();
    try {
      const result = await cache.refresh(sessions, options.service);
      logger.debug({ c: 'CONTROL', ...result }, 'Refreshed the logical session cache');
    } catch (err) {
      logger.info({ c: 'CONTROL', err }, 'Failed to refresh session cache, will try again at the next refresh interval');
    }
    if (options.reap === undefined) return;
    try {
      const reaped = await options.reap(sessions);
      if (reaped > 0) logger.info({ c: 'CONTROL', reaped }, 'Reaped the retryable-write records of expired sessions');
    } catch (err) {
      logger.info({ c: 'CONTROL', err }, 'Failed to reap transaction table');
    }
  };
  const schedule = (): void => {
    timer = options.clock.setTimer(options.periodMs, () => {
      round = runRound().finally(() => {
        if (!stopped) schedule();
      });
    }, { unref: true });
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      timer?.cancel();
      await round;
    },
  };
}
