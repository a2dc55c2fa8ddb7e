import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { MaxKey, MinKey } from 'bson';
import type { Doc } from '../bson/values.js';
import type { CollectionType } from '../catalog/type_chunk.js';
import type { ReshardingDecision, ReshardingFacts } from './resharding_request.js';

// What asked for a resharding (MongoDB 8.0's `provenance`): moveCollection and unshardCollection
// are reshardings to the key {_id: 1} whose collection ends tracked as unsplittable, its one chunk
// on the destination shard.
export type ReshardingProvenance = 'reshardCollection' | 'moveCollection' | 'unshardCollection';

// A tracked collection that is not sharded: MongoDB 8.0's `unsplittable` entry.
export function isUnsplittable(collection: CollectionType | undefined): boolean {
  return collection?.unsplittable === true;
}

export function parseProvenance(raw: unknown): ReshardingProvenance | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'reshardCollection' || raw === 'moveCollection' || raw === 'unshardCollection') return raw;
  throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${String(raw)}' for field 'provenance' is not a valid value.`);
}

// The one destination shard a moveCollection or unshardCollection names (`shardDistribution`,
// one range over the whole key space): undefined when unshardCollection names none.
export function parseDestination(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.length !== 1 || typeof (raw[0] as Doc | undefined)?.shard !== 'string') {
    throw new MongoError(ErrorCodes.InvalidOptions, 'shardDistribution must name exactly one destination shard');
  }
  return (raw[0] as Doc).shard as string;
}

export interface MoveFacts extends ReshardingFacts {
  // The shards with their data sizes (listDatabases' totalSize), for an unshardCollection that
  // names no destination: the least loaded shard that is not draining takes it.
  readonly shardSizes?: readonly { readonly id: string; readonly dataSizeBytes: number }[];
}

// The config server's checks of a moveCollection or unshardCollection and the layout after it, as
// MongoDB 8.0's coordinators decide them, before anything is persisted.
export function decideMoveOrUnshard(provenance: 'moveCollection' | 'unshardCollection', ns: string, toShard: string | undefined, facts: MoveFacts): ReshardingDecision {
  const collection = facts.collection;
  if (collection === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `Collection ${ns} is not tracked by the sharding catalog`);
  const current = [...new Set(facts.chunks.map((c) => c.shard))].sort();
  const unsplittable = isUnsplittable(collection);
  if (provenance === 'moveCollection') {
    if (!unsplittable) throw new MongoError(ErrorCodes.NamespaceNotFound, `moveCollection applies to unsharded collections only; ${ns} is sharded`);
  } else if (unsplittable) {
    if (toShard !== undefined && !current.includes(toShard)) {
      throw new MongoError(ErrorCodes.NamespaceNotSharded, `Collection ${ns} is unsharded already; moveCollection moves it to another shard`);
    }
    return { kind: 'noop' };
  }
  const destination = toShard ?? leastLoaded(facts);
  const shard = facts.shards.find((s) => s._id === destination);
  if (shard === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${destination} not found`);
  if (provenance === 'moveCollection' && current.length === 1 && current[0] === destination) return { kind: 'noop' };
  if (facts.zones.length > 0) {
    throw new MongoError(ErrorCodes.IllegalOperation, `Collection ${ns} has zones: remove its ranges from their zones before ${provenance}`);
  }
  return {
    kind: 'reshard',
    collection,
    donorShards: current,
    recipientShards: [destination],
    newChunks: [{ min: { _id: new MinKey() }, max: { _id: new MaxKey() }, shard: destination }],
    zones: [],
  };
}

function leastLoaded(facts: MoveFacts): string {
  const draining = new Set(facts.shards.filter((s) => s.draining === true).map((s) => s._id));
  const candidates = (facts.shardSizes ?? []).filter((s) => !draining.has(s.id));
  const best = [...candidates].sort((a, b) => a.dataSizeBytes - b.dataSizeBytes || a.id.localeCompare(b.id))[0];
  if (best === undefined) throw new MongoError(ErrorCodes.ShardNotFound, 'No shard that is not draining can take the collection');
  return best.id;
}
