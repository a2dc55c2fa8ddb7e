// npm run bench -- shardsets [monitor] [load] [outage] (issue 32, "Speed"): a sharded cluster
// whose shards are replica sets. The router's monitor cost, idle, for 10 sets of 3 members against
// 10 single-node shards; then, on a cluster of two 3-member sets, writes with w: 'majority' against
// w: 1 and reads with secondaryPreferred against primary, and the write outage through the router
// when a shard's primary is killed. Sizes: DOCSHARD_BENCH_SHSETS_IDLE_S (the idle measurement,
// default 30), DOCSHARD_BENCH_SHSETS_ROUND_S (each round of load, default 8),
// DOCSHARD_BENCH_SHSETS_KILLS (default 20) and DOCSHARD_BENCH_SHSETS_KILL_S (the kills' time
// budget, default 300).
import { loadavg } from 'node:os';
import { spawnSetsCluster } from './shardsets_cluster.js';
import { loadRows } from './shardsets_load.js';
import { monitorCostRows } from './shardsets_monitor.js';
import { outageRows } from './shardsets_outage.js';
import { printTable } from './table.js';

const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');

export async function runShardsetsBench(): Promise<void> {
  const parts = new Set(process.argv.slice(3));
  const want = (p: string): boolean => parts.size === 0 || parts.has(p);
  process.stdout.write(`load average at start: ${load()}\n\n`);
  if (want('monitor')) {
    const { rows, note } = await monitorCostRows();
    printTable([`router CPU, idle (${note})`, 'CPU', 'router RSS', 'per slice, ms/s'], rows);
    process.stdout.write(`\nload average after the monitor part: ${load()}\n\n`);
  }
  if (want('load') || want('outage')) {
    const cluster = await spawnSetsCluster(2);
    try {
      if (want('load')) {
        const { writes, reads } = await loadRows(cluster);
        printTable(['through the router, 2 shards of 3-member sets', 'ops/s', 'p50', 'p99', 'per round'], writes);
        process.stdout.write('\n');
        printTable(['through the router, 2 shards of 3-member sets', 'ops/s', 'p50', 'p99', 'per round'], reads);
        process.stdout.write(`\nload average after the load part: ${load()}\n\n`);
      }
      if (want('outage')) {
        printTable(['SIGKILL of a shard primary →', 'kills', 'p50', 'p99', 'min', 'max'], await outageRows(cluster));
        process.stdout.write('\n');
      }
    } finally {
      await cluster.stop();
    }
  }
  process.stdout.write(`load average at end: ${load()}\n`);
}
