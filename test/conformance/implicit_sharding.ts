import type { ClientSession, MongoClient } from 'mongodb';
import type { Entity } from './entities.js';
import type { Doc } from './test_file.js';

// --shard-collections, as MongoDB's sharded-collections passthrough
// (jstests/libs/override_methods/implicitly_shard_accessed_collections.js): every collection a
// test creates is sharded on {_id: 'hashed'} through the router before any data goes in. The
// runner asks here before initialData fills a collection and around every operation that may
// create one.

// Namespaces the passthrough leaves alone, and a `local` database no router can shard.
const DENIED_DATABASES = new Set(['admin', 'config', 'local']);
// Sharding a collection with these options is refused by MongoDB itself, so they stay unsharded.
const UNSHARDABLE_OPTIONS = ['capped', 'timeseries', 'viewOn', 'clusteredIndex'];

export function shardable(databaseName: string, collectionName: string, createOptions?: Doc): boolean {
  if (DENIED_DATABASES.has(databaseName) || collectionName.startsWith('system.') || collectionName.includes('$')) return false;
  return !UNSHARDABLE_OPTIONS.some((o) => createOptions?.[o] !== undefined);
}

/** Through the router, as an operator would; shardCollection creates the collection if needed. */
export async function shardCollection(internal: MongoClient, databaseName: string, collectionName: string, createOptions?: Doc): Promise<void> {
  const command: Doc = { shardCollection: `${databaseName}.${collectionName}`, key: { _id: 'hashed' } };
  // A collection with a default collation can only be sharded with the simple one stated.
  if (createOptions?.collation) command.collation = { locale: 'simple' };
  await internal.db('admin').command(command);
}

// Collection operations that create their collection when it does not exist: always, or only
// when they upsert.
const CREATING_OPERATIONS = new Set(['insertOne', 'insertMany', 'createIndex']);
const UPSERTING_OPERATIONS = new Set(['updateOne', 'updateMany', 'replaceOne', 'findOneAndUpdate', 'findOneAndReplace']);

function mayCreate(name: string, args: Doc): boolean {
  if (CREATING_OPERATIONS.has(name)) return true;
  if (UPSERTING_OPERATIONS.has(name)) return args.upsert === true;
  if (name !== 'bulkWrite') return false;
  return (args.requests as Doc[]).some((request) => {
    const [kind, spec] = Object.entries(request)[0] as [string, Doc];
    return kind === 'insertOne' || ((kind === 'updateOne' || kind === 'updateMany' || kind === 'replaceOne') && spec.upsert === true);
  });
}

// A collection a transaction creates exists only once the transaction commits (tests check that
// it does not before), and shardCollection cannot run in a transaction: such a collection is
// left unsharded, on its database's primary shard.
function inTransaction(args: Doc): boolean {
  return (args.session as ClientSession | undefined)?.inTransaction() === true;
}

/** Shards the collection an operation is about to create implicitly (by a write or an index). */
export async function beforeOperation(internal: MongoClient, name: string, target: Entity, args: Doc): Promise<void> {
  if (target.kind !== 'collection' || !mayCreate(name, args) || inTransaction(args)) return;
  const { dbName, collectionName } = target.collection;
  if (!shardable(dbName, collectionName)) return;
  const existing = await internal.db(dbName).listCollections({ name: collectionName }, { nameOnly: true }).toArray();
  if (existing.length === 0) await shardCollection(internal, dbName, collectionName);
}

/** Shards a collection an operation has just created explicitly, while it is still empty. */
export async function afterOperation(internal: MongoClient, name: string, target: Entity, args: Doc): Promise<void> {
  if (target.kind !== 'database' || inTransaction(args)) return;
  let collectionName: unknown;
  let options: Doc;
  if (name === 'createCollection') {
    ({ collection: collectionName, ...options } = args);
  } else if (name === 'runCommand' && typeof (args.command as Doc).create === 'string') {
    ({ create: collectionName, ...options } = args.command as Doc);
  } else {
    return;
  }
  const dbName = target.db.databaseName;
  if (typeof collectionName === 'string' && shardable(dbName, collectionName, options)) await shardCollection(internal, dbName, collectionName, options);
}
