import type { ObjectId } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';

export const SHARD_IDENTITY_NS = 'admin.system.version';
export const SHARD_IDENTITY_ID = 'shardIdentity';

export interface ShardIdentity {
  shardName: string;
  clusterId: ObjectId;
  configsvrConnectionString: string;
}

// Which cluster this node belongs to (seed 001, "Sharding Component Initialization"): a node is
// standalone until addShard persists its identity document, and re-initialises from that
// document on every restart.
export class ShardingState {
  private identity: ShardIdentity | undefined;

  constructor(private readonly local: LocalCollections) {
    const doc = local.findOne(SHARD_IDENTITY_NS, { _id: SHARD_IDENTITY_ID });
    if (doc) this.identity = fromDoc(doc);
  }

  get enabled(): boolean {
    return this.identity !== undefined;
  }

  get shardName(): string | undefined {
    return this.identity?.shardName;
  }

  get configHost(): string | undefined {
    return this.identity?.configsvrConnectionString;
  }

  get clusterId(): ObjectId | undefined {
    return this.identity?.clusterId;
  }

  // Persist, then act: the identity is written before the node behaves as a shard.
  initialize(identity: ShardIdentity): void {
    this.local.write((w) => {
      w.update(SHARD_IDENTITY_NS, { _id: SHARD_IDENTITY_ID }, { _id: SHARD_IDENTITY_ID, ...identity }, { upsert: true });
    });
    this.identity = identity;
  }

  // The identity a secondary applied from its primary's _addShard (ShardingOpObserver).
  adopt(identity: ShardIdentity): void {
    this.identity = identity;
  }
}

function fromDoc(doc: Doc): ShardIdentity {
  return {
    shardName: String(doc.shardName),
    clusterId: doc.clusterId as ObjectId,
    configsvrConnectionString: String(doc.configsvrConnectionString),
  };
}

export function parseShardIdentity(raw: unknown): ShardIdentity | undefined {
  if (!isPlainObject(raw) || typeof raw.shardName !== 'string' || typeof raw.configsvrConnectionString !== 'string') return undefined;
  return fromDoc(raw);
}
