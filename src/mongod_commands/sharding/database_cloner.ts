import { BSON, Long } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { serializeDocument, type Doc } from '../../bson/values.js';
import type { Binary } from 'bson';
import { checkOk, fetchAll } from '../../wire/remote_cursor.js';
import type { MongodServices } from '../command.js';

// The recipient's part of movePrimary (MongoDB's _shardsvrCloneCatalogData / Cloner): each
// unsharded collection is created with the donor's options and UUID, gets the donor's indexes,
// then its documents in the donor's find/getMore batches, kept as the bytes the donor sent.
// Sharded collections only get their catalog entry (options, UUID, indexes) when missing, since
// the primary shard answers for their catalog; their documents stay with the chunks' owners.
export async function cloneDatabase(node: MongodServices, db: string, fromHost: string, collections: readonly string[], sharded: readonly string[]): Promise<string[]> {
  const cloned: string[] = [];
  for (const name of collections) {
    await createLikeDonor(node, db, fromHost, name, { mustBeNew: true });
    await copyDocuments(node, db, fromHost, name);
    cloned.push(`${db}.${name}`);
  }
  for (const name of sharded) {
    if (node.storage.getCollection(`${db}.${name}`) === undefined) await createLikeDonor(node, db, fromHost, name, { mustBeNew: false });
  }
  return cloned;
}

async function createLikeDonor(node: MongodServices, db: string, fromHost: string, name: string, opts: { mustBeNew: boolean }): Promise<void> {
  const ns = `${db}.${name}`;
  const [info] = await fetchAll(node.client, fromHost, db, { listCollections: 1, filter: { name } });
  if (info === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `movePrimary: ${ns} no longer exists on the donor`);
  const { storage } = node;
  if (storage.getCollection(ns) !== undefined) {
    if (opts.mustBeNew) throw new MongoError(ErrorCodes.NamespaceExists, `Found orphaned collection ${ns} on the recipient`);
    return;
  }
  const uuid = (info.info as Doc | undefined)?.uuid as Binary | undefined;
  const coll = storage.createCollection(ns, (info.options as Doc | undefined) ?? {}, uuid);
  const specs = await fetchAll(node.client, fromHost, db, { listIndexes: name });
  const indexes = specs.filter((s) => s.name !== '_id_').map(({ ns: _ns, ...spec }) => spec);
  if (indexes.length > 0) storage.createIndexes(coll, indexes);
}

const CLONE_BATCH_SIZE = 1000;

async function copyDocuments(node: MongodServices, db: string, fromHost: string, name: string): Promise<void> {
  const ns = `${db}.${name}`;
  let batch = await rawCursorCommand(node, fromHost, db, { find: name, batchSize: CLONE_BATCH_SIZE });
  for (;;) {
    insertBatch(node, ns, batch.documents);
    if (batch.id.isZero()) return;
    batch = await rawCursorCommand(node, fromHost, db, { getMore: batch.id, collection: name, batchSize: CLONE_BATCH_SIZE });
  }
}

function insertBatch(node: MongodServices, ns: string, documents: readonly Uint8Array[]): void {
  if (documents.length === 0) return;
  const coll = node.storage.getCollection(ns);
  if (coll === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `${ns} was dropped during movePrimary`);
  node.storage.write((unit) => {
    for (const bytes of documents) unit.insertBytes(coll, bytes);
  });
}

// A find or getMore whose batch comes back as the documents' own bytes (not decoded).
async function rawCursorCommand(node: MongodServices, host: string, db: string, cmd: Doc): Promise<{ documents: Uint8Array[]; id: Long }> {
  const bytes = await node.client.commandRaw(host, db, serializeDocument({ ...cmd, $db: db }));
  const reply = BSON.deserialize(bytes, { fieldsAsRaw: { firstBatch: true, nextBatch: true }, promoteLongs: false }) as Doc;
  checkOk(reply);
  const cursor = reply.cursor as Doc;
  const documents = (cursor.firstBatch ?? cursor.nextBatch) as Uint8Array[];
  return { documents, id: Long.isLong(cursor.id) ? cursor.id : Long.fromValue(cursor.id as number) };
}
