import type { MongoClient } from 'mongodb';
import { describe, matchExactly } from './matcher.js';
import type { CollectionData, Doc } from './test_file.js';

// initialData before a test and outcome after it, both through the internal client.

const MAJORITY = { writeConcern: { w: 'majority' as const } };
const NAMESPACE_NOT_FOUND = 26;

// Sharding a collection with these options is refused by MongoDB itself, so they stay unsharded.
const UNSHARDABLE_OPTIONS = ['capped', 'timeseries', 'viewOn', 'clusteredIndex'];

export async function setUpCollections(internal: MongoClient, data: CollectionData[], shardCollections: boolean): Promise<void> {
  for (const c of data) {
    const db = internal.db(c.databaseName);
    await db.dropCollection(c.collectionName, MAJORITY).catch((err: { code?: number }) => {
      if (err.code !== NAMESPACE_NOT_FOUND) throw err;
    });
    if (c.createOptions) await db.createCollection(c.collectionName, { ...c.createOptions, ...MAJORITY });
    const shard = shardCollections && !UNSHARDABLE_OPTIONS.some((o) => c.createOptions?.[o] !== undefined);
    if (shard) await shardCollection(internal, c);
    if (c.documents.length > 0) await db.collection(c.collectionName).insertMany(c.documents, MAJORITY);
    else if (!c.createOptions && !shard) await db.createCollection(c.collectionName, MAJORITY);
  }
}

/** Through the router, as an operator would, on {_id: 'hashed'} so the data spreads over every shard
 * (MongoDB's sharded-collections passthrough); shardCollection creates the collection if needed. */
async function shardCollection(internal: MongoClient, c: CollectionData): Promise<void> {
  const command: Doc = { shardCollection: `${c.databaseName}.${c.collectionName}`, key: { _id: 'hashed' } };
  // A collection with a default collation can only be sharded with the simple one stated.
  if (c.createOptions?.collation) command.collation = { locale: 'simple' };
  await internal.db('admin').command(command);
}

/** null when every listed collection holds exactly the expected documents. */
export async function checkOutcome(internal: MongoClient, outcome: CollectionData[]): Promise<string | null> {
  for (const c of outcome) {
    const actual = await internal
      .db(c.databaseName)
      .collection(c.collectionName)
      .find({}, { sort: { _id: 1 }, readPreference: 'primary', readConcern: { level: 'local' } })
      .toArray();
    const m = matchExactly(c.documents, actual);
    if (m) return `outcome ${c.databaseName}.${c.collectionName} ${describe(m)}`;
  }
  return null;
}
