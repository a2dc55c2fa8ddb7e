import { ObjectId } from 'bson';
import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import { changeLogEntry, CONFIG_SHARD } from '../catalog_decisions/changelog.js';
import { decideRemoveShard, removeShardReply, resolveShard } from '../catalog_decisions/remove_shard.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';
import type { Clock } from '../base/clock.js';

// removeShard on the config server (7.0's ShardingCatalogManager::removeShard and
// _configsvrRemoveShard): mark the shard draining, report what is left on it (the balancer moves
// its chunks away, movePrimary its databases), and remove its config.shards entry once nothing is.
//
// The removed node is not told anything, as in MongoDB: it keeps its data and its shard identity
// (the config server may not even reach it, and the data is the operator's to inspect or drop).
// Added again, it comes back under the same name (see ShardingCatalogManager.addShard).
export class RemoveShardCatalog {
  constructor(
    private readonly local: LocalCollections,
    private readonly catalog: ShardingCatalogManager,
    private readonly selfHost: string,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  // Each call reads, decides and writes without yielding, so concurrent calls do not interleave.
  removeShard(shardIdOrHost: string): Doc {
    const shards = this.catalog.shards();
    const shard = resolveShard(shards, shardIdOrHost)._id;
    const usage = {
      chunks: this.local.find('config.chunks', { shard }).length,
      jumboChunks: this.local.find('config.chunks', { shard, jumbo: true }).length,
      databases: this.local.find('config.databases', { primary: shard }, { sort: { _id: 1 } }).map((d) => String(d._id)),
    };
    const zonesWithRanges = [...new Set(this.local.find('config.tags').map((t) => String(t.tag)))];
    const decision = decideRemoveShard({ shardIdOrHost, shards, usage, zonesWithRanges });
    switch (decision.kind) {
      case 'start':
        this.local.write((w) => {
          w.insert('config.changelog', this.entry('removeShard.start', { shard }));
          w.update('config.shards', { _id: shard }, { $set: { draining: true } });
        });
        this.logger.info({ c: 'SHARDING', shardId: shard }, 'Going to start draining shard');
        break;
      case 'ongoing':
        this.logger.info({ c: 'SHARDING', shardId: shard, ...decision.remaining }, 'removeShard: draining');
        break;
      case 'remove': {
        const topologyTime = this.catalog.now();
        this.local.write((w) => {
          w.delete('config.shards', { _id: shard });
          w.update('config.shards', { _id: decision.controlShard }, { $set: { topologyTime } });
          w.insert('config.changelog', this.entry('removeShard', { shard }));
        });
        this.logger.info({ c: 'SHARDING', shardId: shard }, 'Removed shard');
        break;
      }
    }
    return removeShardReply(decision);
  }

  private entry(what: string, details: Doc): Doc {
    return changeLogEntry({ server: this.selfHost, clientAddr: '', time: new Date(this.clock.now()), newId: () => new ObjectId() }, CONFIG_SHARD, what, '', details);
  }
}
