import type { MongoClient } from 'mongodb';
import { shardable, shardCollection } from './implicit_sharding.js';
import { describe, matchExactly } from './unified_matcher.js';
import type { CollectionData } from './test_file.js';

// initialData before a test and outcome after it, both through the internal client.

const MAJORITY = { writeConcern: { w: 'majority' as const } };
const NAMESPACE_NOT_FOUND = 26;

export async function setUpCollections(internal: MongoClient, data: CollectionData[], shardCollections: boolean): Promise<void> {
  for (const c of data) {
    const db = internal.db(c.databaseName);
    await db.dropCollection(c.collectionName, MAJORITY).catch((err: { code?: number }) => {
      if (err.code !== NAMESPACE_NOT_FOUND) throw err;
    });
    if (c.createOptions) await db.createCollection(c.collectionName, { ...c.createOptions, ...MAJORITY });
    const shard = shardCollections && shardable(c.databaseName, c.collectionName, c.createOptions);
    if (shard) await shardCollection(internal, c.databaseName, c.collectionName, c.createOptions);
    if (c.documents.length > 0) await db.collection(c.collectionName).insertMany(c.documents, MAJORITY);
    else if (!c.createOptions && !shard) await db.createCollection(c.collectionName, MAJORITY);
  }
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
