import type { Logger } from 'pino';
import { checkOk } from '../wire/remote_cursor.js';
import { patternToBSON, type SessionKillerMatcher } from '../sessions/kill_sessions.js';
import type { RouterServices } from './router_services.js';

// MongoDB's KillSessionsPerHostTimeoutMS.
const PER_HOST_TIMEOUT_MS = 60_000;

// MongoDB's killSessionsRemote: what a router's client asked to kill is killed on every shard too,
// as one killAllSessionsByPattern each, in parallel. The shards are read again from the config
// server first, so a shard added since the router last looked is not missed. Answers the hosts that
// failed.
export function killSessionsRemote(router: Pick<RouterServices, 'client' | 'shardRegistry'>, logger: Logger): (matcher: SessionKillerMatcher) => Promise<string[]> {
  return async (matcher) => {
    await router.shardRegistry.reload();
    const cmd = { killAllSessionsByPattern: matcher.patterns.map(patternToBSON) };
    const hosts = (await router.shardRegistry.all()).map((shard) => shard.host);
    const failed: string[] = [];
    await Promise.all(hosts.map(async (host) => {
      try {
        checkOk(await router.client.command(host, 'admin', cmd, { timeoutMs: PER_HOST_TIMEOUT_MS }));
      } catch (err) {
        failed.push(host);
        logger.error({ c: 'COMMAND', host, err }, 'Failed to kill sessions on some hosts');
      }
    }));
    return failed;
  };
}
