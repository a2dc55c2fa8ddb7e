import type { Timer } from '../../base/clock.js';
import { isNumber, type Doc } from '../../bson/values.js';
import { checkOk, fetchAll } from '../../wire/remote_cursor.js';
import type { RouterServices } from '../router_services.js';
import type { ActiveAnalyzer } from './query_sampler.js';

// The router's two query analysis jobs, as mongos's: every
// queryAnalysisSamplerConfigurationRefreshSecs (10 s) it reads which analyzers are on from
// config.queryAnalyzers and how many routers share their rates (config.mongos), and every second it writes the queries it sampled to
// config.sampledQueries on the config server (mongos hands them to the shards, which write them
// every queryAnalysisWriterIntervalSecs, 90 s; analyzeShardKey reads them on the config server).

const REFRESH_INTERVAL_MS = 10_000;
const WRITE_INTERVAL_MS = 1_000;

// queryAnalysisSamplerInActiveThresholdSecs's default: a router that has not pinged the config
// server for that long no longer takes a share of the rates.
const INACTIVE_ROUTER_MS = 300_000;

export async function refreshQueryAnalyzers(router: RouterServices): Promise<void> {
  const docs = await fetchAll(router.client, router.options.configHost, 'config', { find: 'queryAnalyzers', filter: { mode: 'full' } });
  const since = new Date(router.wallClock.now() - INACTIVE_ROUTER_MS);
  const routers = await fetchAll(router.client, router.options.configHost, 'config', { find: 'mongos', filter: { ping: { $gte: since } }, projection: { _id: 1 } });
  router.queryAnalysis.setRouterCount(routers.length);
  const active: ActiveAnalyzer[] = docs.filter((d) => typeof d._id === 'string' && isNumber(d.samplesPerSecond))
    .map((d) => ({ ns: d._id as string, collUuid: d.collUuid, samplesPerSecond: Number(d.samplesPerSecond), ...(d.startTime instanceof Date ? { startTime: d.startTime } : {}) }));
  router.queryAnalysis.setActive(active, router.wallClock.now());
}

// Writes what this router sampled so far; analyzeShardKey calls it first, so that its own
// router's samples are counted.
export async function writeSampledQueries(router: RouterServices): Promise<void> {
  const documents: Doc[] = router.queryAnalysis.drain();
  if (documents.length === 0) return;
  checkOk(await router.client.command(router.options.configHost, 'config', { insert: 'sampledQueries', documents, ordered: false }));
}

export function startQueryAnalysisJobs(router: RouterServices): { stop(): void } {
  const warn = (what: string) => (err: unknown) => router.logger.warn({ c: 'QUERY', err }, what);
  const timers: Timer[] = [
    router.wallClock.setRepeatingTimer(REFRESH_INTERVAL_MS, () => void refreshQueryAnalyzers(router).catch(warn('Could not refresh the query analyzer configurations')), { unref: true }),
    router.wallClock.setRepeatingTimer(WRITE_INTERVAL_MS, () => void writeSampledQueries(router).catch(warn('Could not write the sampled queries')), { unref: true }),
  ];
  void refreshQueryAnalyzers(router).catch(warn('Could not refresh the query analyzer configurations'));
  return { stop: () => { for (const timer of timers) timer.cancel(); } };
}
