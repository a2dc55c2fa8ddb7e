import { BSON, type Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { shardVersionToBSON, unshardedVersion } from '../catalog/chunk_version.js';
import type { DatabaseType } from '../catalog/type_chunk.js';
import { DOCUMENT_SEQUENCE_SECTION, OP_MSG_REPLY_PREFIX, type DocumentSequence } from '../wire/message.js';
import { checkOk } from '../wire/remote_cursor.js';
import { CLUSTER_TIME_ELEMENT_LENGTH, clusterTimeMetadata, writeClusterTimeElement } from '../sessions/logical_time_metadata.js';
import { DatabaseNotFound } from './catalog_cache.js';
import type { ChunkManager } from './chunk_manager.js';
import type { RouterServices } from './router_services.js';
import { currentRouterTransaction, type RouterTransaction } from './transaction_router.js';

// mongos retries a stale routing error this many times before giving up.
export const MAX_STALE_RETRIES = 10;

// What the router knows about a namespace: its database (primary shard, version) and, when the
// collection is sharded, its routing table.
export interface Routing {
  ns: string;
  db: DatabaseType;
  cm: ChunkManager | undefined;
}

export async function getRouting(router: RouterServices, ns: string, createDatabase: boolean): Promise<Routing> {
  const dbName = ns.slice(0, ns.indexOf('.'));
  const db = await router.catalogCache.requireDatabase(dbName, createDatabase);
  return { ns, db, cm: await router.catalogCache.getCollection(ns) };
}

// getRouting when the cache already holds both the database and a fresh routing table, without
// waiting on anything; undefined when getRouting would have to load or refresh something.
export function cachedRouting(router: RouterServices, ns: string): Routing | undefined {
  return router.catalogCache.peekRouting(ns);
}

// The token a routed command carries (seed 004): the shard version of the target shard for a
// sharded collection, or UNSHARDED plus the database version for an unsharded one.
export function versionFields(routing: Routing, shardId: string): Doc {
  if (routing.cm) return { shardVersion: routing.cm.shardVersionToken(shardId, shardVersionToBSON) };
  return { shardVersion: shardVersionToBSON(unshardedVersion()), databaseVersion: routing.db.version };
}

// The OP_MSG request that carries `cmd` with the router's $clusterTime, versionFields(routing,
// shardId) and $db appended, its header left for WireClient.forwardMessage to fill: the body is
// the bytes serializeDocument({ ...cmd, $clusterTime, ...versionFields(routing, shardId), $db: db })
// gives. The version and $db elements are encoded once per routing table (or cached database
// entry), shard and db and copied in after the command's own, which saves encoding an ObjectId and
// two Timestamps per request. (Spreading the command into a new object and writing that with
// raw_bson's writer measured slower than this.) A `sequence` follows the body as a kind-1 section:
// documents passed on as the bytes they arrived in.
// In a transaction's statement, the command goes as a statement of it (transaction_router.ts).
export function encodeVersionedMessage(routing: Routing, shardId: string, db: string, command: Doc, clusterTime: Timestamp, sequence?: DocumentSequence): Buffer {
  const txn = currentRouterTransaction();
  const cmd = txn === undefined ? command : txn.fieldsFor(shardId, command);
  const extra = sequence === undefined ? 0 : sequenceSize(sequence);
  let message: Buffer;
  let bodyLength: number;
  if ('shardVersion' in cmd || 'databaseVersion' in cmd || '$db' in cmd || '$clusterTime' in cmd) {
    const whole = serializeDocument({ ...cmd, $clusterTime: clusterTimeMetadata(clusterTime), ...versionFields(routing, shardId), $db: db });
    bodyLength = whole.length;
    message = Buffer.allocUnsafe(OP_MSG_REPLY_PREFIX + bodyLength + extra);
    whole.copy(message, OP_MSG_REPLY_PREFIX);
  } else {
    const tail = versionTail(routing, shardId, db);
    const head = BSON.serialize(cmd, SERIALIZE_OPTIONS);
    bodyLength = head.length - 1 + CLUSTER_TIME_ELEMENT_LENGTH + tail.length;
    message = Buffer.allocUnsafe(OP_MSG_REPLY_PREFIX + bodyLength + extra);
    message.set(head, OP_MSG_REPLY_PREFIX);
    // Over the command's terminating 0: the tail ends with the terminator of the whole.
    const at = OP_MSG_REPLY_PREFIX + head.length - 1;
    writeClusterTimeElement(message, at, clusterTime);
    tail.copy(message, at + CLUSTER_TIME_ELEMENT_LENGTH);
    message.writeInt32LE(bodyLength, OP_MSG_REPLY_PREFIX);
  }
  if (sequence !== undefined) writeSequence(message, OP_MSG_REPLY_PREFIX + bodyLength, sequence, extra);
  return message;
}

// The section's bytes: its kind byte, its size, the identifier and the documents.
function sequenceSize(sequence: DocumentSequence): number {
  let size = 1 + 4 + Buffer.byteLength(sequence.identifier) + 1;
  for (const doc of sequence.documents) size += doc.length;
  return size;
}

function writeSequence(message: Buffer, at: number, sequence: DocumentSequence, size: number): void {
  message[at] = DOCUMENT_SEQUENCE_SECTION;
  message.writeInt32LE(size - 1, at + 1);
  let p = at + 5 + message.write(sequence.identifier, at + 5, 'utf8');
  message[p++] = 0;
  for (const doc of sequence.documents) p += doc.copy(message, p);
}

const SERIALIZE_OPTIONS = { checkKeys: false, ignoreUndefined: true } as const;

// Per routing table (or, unsharded, per cached database entry): "shardId\0db" -> the elements
// versionFields + $db and a document terminator, without a document's length.
const versionTails = new WeakMap<object, Map<string, Buffer>>();

export function versionTail(routing: Routing, shardId: string, db: string): Buffer {
  const owner: object = routing.cm ?? routing.db;
  let tails = versionTails.get(owner);
  if (tails === undefined) versionTails.set(owner, tails = new Map());
  const key = routing.cm ? `${shardId}\0${db}` : db;
  let tail = tails.get(key);
  if (tail === undefined) {
    const whole = serializeDocument({ ...versionFields(routing, shardId), $db: db });
    tails.set(key, tail = whole.subarray(4));
  }
  return tail;
}

// sendToShard of `cmd` (and `sequence`) with versionFields(routing, shardId): encoded with the
// cached version bytes (encodeVersionedMessage) and, like sendToShard, without a timeout.
export function sendVersioned(router: RouterServices, routing: Routing, shardId: string, db: string, cmd: Doc, sequence?: DocumentSequence): Promise<Doc> {
  const message = encodeVersionedMessage(routing, shardId, db, cmd, router.clock.now(), sequence);
  const host = router.shardRegistry.cachedHost(shardId);
  const sent = host !== undefined ? router.client.forwardMessage(host, message) : router.shardRegistry.host(shardId).then((found) => router.client.forwardMessage(found, message));
  const txn = currentRouterTransaction();
  return txn === undefined ? sent.then(deserializeDocument) : sent.then((raw) => answeredIn(txn, shardId, deserializeDocument(raw)));
}

export async function sendToShard(router: RouterServices, shardId: string, db: string, cmd: Doc): Promise<Doc> {
  const txn = currentRouterTransaction();
  const sent = txn === undefined ? cmd : txn.fieldsFor(shardId, cmd);
  const host = router.shardRegistry.cachedHost(shardId) ?? await router.shardRegistry.host(shardId);
  const reply = await router.client.command(host, db, sent);
  return txn === undefined ? reply : answeredIn(txn, shardId, reply);
}

function answeredIn(txn: RouterTransaction, shardId: string, reply: Doc): Doc {
  txn.answered(shardId, reply);
  return reply;
}

// ShardNotFound counts too: a cached routing table or database that still names a removed shard
// is stale (MongoDB's router refreshes on it as well).
export function isStaleError(err: unknown): err is MongoError {
  return err instanceof MongoError && isStaleCode(err.code);
}

export function isStaleCode(code: unknown): boolean {
  return code === ErrorCodes.StaleConfig || code === ErrorCodes.StaleDbVersion || code === ErrorCodes.ShardNotFound;
}

// What runWrite forgets when a shard answered a write stale: the collection's routing and its
// database's entry, whatever the error was.
export function invalidateNamespace(router: RouterServices, ns: string): void {
  router.catalogCache.invalidateCollection(ns);
  router.catalogCache.invalidateDatabase(ns.slice(0, ns.indexOf('.')));
}

// Runs `attempt` with fresh routing, refreshing the cached routing table and trying again while a
// shard answers StaleConfig / StaleDbVersion, so the client never sees those errors. The first
// try on cached routing is chained without an async frame: it is every routed request's path.
export function withStaleRetry<T>(router: RouterServices, ns: string, attempt: (routing: Routing) => Promise<T>, createDatabase = false): Promise<T> {
  const routing = cachedRouting(router, ns);
  if (routing === undefined) return retryStale(router, ns, attempt, createDatabase, 0);
  return attempt(routing).catch((err: unknown) => {
    if (!isStaleError(err)) throw err;
    invalidateStale(router, ns, err, 0);
    return retryStale(router, ns, attempt, createDatabase, 1);
  });
}

async function retryStale<T>(router: RouterServices, ns: string, attempt: (routing: Routing) => Promise<T>, createDatabase: boolean, firstTry: number): Promise<T> {
  for (let tries = firstTry; ; tries++) {
    const routing = cachedRouting(router, ns) ?? await getRouting(router, ns, createDatabase);
    try {
      return await attempt(routing);
    } catch (err) {
      if (!isStaleError(err) || tries >= MAX_STALE_RETRIES) throw err;
      invalidateStale(router, ns, err, tries);
    }
  }
}

export function invalidateStale(router: RouterServices, ns: string, err: MongoError, tries: number): void {
  router.logger.debug({ c: 'SHARDING', ns, code: err.code, tries }, 'Stale routing information; refreshing and retrying');
  router.catalogCache.statistics.staleConfigRetries += 1;
  if (err.code !== ErrorCodes.StaleConfig) router.catalogCache.invalidateDatabase(ns.slice(0, ns.indexOf('.')));
  router.catalogCache.invalidateCollection(ns);
}

// A read of a database that does not exist answers `empty`, as mongos answers it
// (appendEmptyResultSet) rather than an error: also when the router learns so only from a shard's
// StaleDbVersion, after a dropDatabase through another router.
export function emptyWithoutDatabase<T>(read: Promise<T>, empty: T): Promise<T> {
  return read.catch((err: unknown) => {
    if (err instanceof DatabaseNotFound) return empty;
    throw err;
  });
}

// A shard reply, with stale routing errors thrown so withStaleRetry sees them.
export function throwIfStale(reply: Doc): Doc {
  if (reply.ok === 0 && (reply.code === ErrorCodes.StaleConfig || reply.code === ErrorCodes.StaleDbVersion)) checkOk(reply);
  return reply;
}
