import type { Logger } from 'pino';
import type { Clock, Timer } from '../base/clock.js';
import { formatConnectionString } from '../catalog_decisions/add_shard.js';
import { isSetConnectionString, parseConnectionString } from '../client/connection_string.js';
import type { LocalCollections } from '../query/exec/local_collection.js';

// Subscribes `onConfirmed` to the members a set's primary reports (the process's replica set
// monitor of the set `connectionString` names); returns what unsubscribes.
export type WatchSet = (connectionString: string, onConfirmed: (hosts: readonly string[]) => void) => () => void;

// How often config.shards is read again for shards added or removed since: a local read.
const RESCAN_MS = 1000;

// MongoDB's ShardingReplicaSetChangeListener as it ends on the config server: a shard that is a
// replica set has its config.shards.host rewritten (`name/h1:p1,...`, hosts then passives as its
// primary lists them) when a reconfig adds or removes members, so that a router or shard that
// starts later, or a monitor that lost every member it knew, finds the set from the catalog. Runs
// on the config server's primary only, each write fenced by the term it started in.
export class ShardHostsUpdater {
  private readonly watching = new Map<string, { host: string; unwatch: () => void }>();
  private timer: Timer | undefined;
  private isCurrent: () => boolean = () => false;

  constructor(
    private readonly local: LocalCollections,
    private readonly watch: WatchSet,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(isCurrent: () => boolean): void {
    this.stop();
    this.isCurrent = isCurrent;
    this.rescan();
    this.timer = this.clock.setRepeatingTimer(RESCAN_MS, () => this.rescan(), { unref: true });
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    for (const { unwatch } of this.watching.values()) unwatch();
    this.watching.clear();
  }

  // Watches every set shard's set under the host string it has now; one whose entry changed
  // (rewritten here, or removed) is watched afresh or no more.
  private rescan(): void {
    if (!this.isCurrent()) return;
    const shards = new Map<string, string>();
    for (const s of this.local.find('config.shards')) if (typeof s.host === 'string' && isSetConnectionString(s.host)) shards.set(String(s._id), s.host);
    for (const [id, w] of this.watching) {
      if (shards.get(id) === w.host) continue;
      w.unwatch();
      this.watching.delete(id);
    }
    for (const [id, host] of shards) {
      if (this.watching.has(id)) continue;
      const setName = parseConnectionString(host).setName!;
      const entry = { host, unwatch: () => {} };
      this.watching.set(id, entry);
      entry.unwatch = this.watch(host, (hosts) => this.confirmed(id, setName, hosts));
    }
  }

  private confirmed(shardId: string, setName: string, hosts: readonly string[]): void {
    if (!this.isCurrent() || hosts.length === 0) return;
    const host = formatConnectionString({ setName, hosts: [...hosts] });
    const updated = this.local.write((w) => {
      const shard = this.local.findOne('config.shards', { _id: shardId });
      if (shard === undefined || shard.host === host || typeof shard.host !== 'string' || parseConnectionString(shard.host).setName !== setName) return undefined;
      w.update('config.shards', { _id: shardId }, { $set: { host } });
      return shard.host;
    });
    if (updated !== undefined) this.logger.info({ c: 'SHARDING', shardId, from: updated, to: host }, 'Updated the host of a replica set shard in config.shards');
  }
}
