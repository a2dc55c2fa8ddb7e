import { Timestamp, type Binary } from 'bson';
import type { Logger } from 'pino';
import { serializeDocument, type Doc } from '../bson/values.js';
import type { ReplicatedOplog } from '../oplog/replicated_oplog.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { Network } from '../wire/network.js';

const REQUEST_TIMEOUT_MS = 60_000;
const BATCH_SIZE = 1000;
const SECONDARY_OK: Doc = { $readPreference: { mode: 'secondaryPreferred' } };
const AVAILABLE: Doc = { readConcern: { level: 'available' } };

export interface InitialSyncDeps {
  network: Network;
  storage: StorageEngine;
  oplog: ReplicatedOplog;
  logger: Logger;
}

// MongoDB's InitialSyncer, for a member with no oplog: the source's last optime first (begin),
// then every database's collections with their options, UUIDs (the applier finds collections by
// `ui`), indexes and documents, then the source's oplog from begin to its end, applied (idempotent:
// what the clone already holds is written again the same). The source's rollback id is read
// before and after; a source that rolled back meanwhile makes the attempt fail, for another.
// Returns the last entry applied: the member's first oplog entry as the core sees it.
export async function initialSync(host: string, deps: InitialSyncDeps): Promise<Doc> {
  const { storage, oplog, logger } = deps;
  // The source may be a secondary (secondaryOk), and its transactions prepared meanwhile hold the
  // clone back no longer than any read at 'available' (what they commit comes with the oplog).
  const run = async (db: string, cmd: Doc): Promise<Doc> => {
    const reply = await deps.network.command(host, db, { ...cmd, ...SECONDARY_OK, ...(cmd.find === undefined || db === 'local' ? {} : AVAILABLE) }, { timeoutMs: REQUEST_TIMEOUT_MS });
    if (reply.ok !== 1) throw new Error(`${Object.keys(cmd)[0]} on ${host} failed: ${String(reply.errmsg)}`);
    return reply;
  };
  // Every document of a cursor, batch by batch.
  const eachBatch = async (db: string, coll: string, first: Doc, onBatch: (docs: Doc[]) => Promise<void> | void): Promise<void> => {
    let cursor = first.cursor as Doc;
    await onBatch(cursor.firstBatch as Doc[]);
    while (Number(cursor.id) !== 0) {
      cursor = (await run(db, { getMore: cursor.id, collection: coll, batchSize: BATCH_SIZE })).cursor as Doc;
      await onBatch(cursor.nextBatch as Doc[]);
    }
  };

  const rbidBefore = (await run('admin', { replSetGetRBID: 1 })).rbid;
  const [begin] = ((await run('local', { find: 'oplog.rs', hint: { $natural: -1 }, limit: 1 })).cursor as Doc).firstBatch as Doc[];
  if (begin === undefined) throw new Error(`${host} has no oplog to sync from`);
  logger.info({ c: 'INITSYNC', host, beginTimestamp: begin.ts }, 'Initial sync started');
  // What an earlier attempt applied is not this attempt's history.
  oplog.truncateAfter(new Timestamp({ t: 0, i: 0 }));

  const databases = (await run('admin', { listDatabases: 1, nameOnly: true })).databases as Doc[];
  for (const { name } of databases) {
    const db = String(name);
    if (db === 'local') continue;
    oplog.unlogged(() => storage.dropDatabase(db));
    const listed: Doc[] = [];
    await eachBatch(db, '$cmd.listCollections', await run(db, { listCollections: 1 }), (docs) => void listed.push(...docs));
    for (const c of listed) {
      if (c.type !== 'collection') continue;
      const ns = `${db}.${String(c.name)}`;
      const uuid = (c.info as Doc).uuid as Binary;
      const coll = oplog.unlogged(() => storage.createCollection(ns, c.options as Doc, uuid));
      const indexes: Doc[] = [];
      await eachBatch(db, String(c.name), await run(db, { listIndexes: c.name }), (docs) => void indexes.push(...docs));
      const specs = indexes.filter((spec) => spec.name !== '_id_');
      if (specs.length > 0) oplog.unlogged(() => storage.createIndexes(coll, specs));
      await eachBatch(db, String(c.name), await run(db, { find: c.name, batchSize: BATCH_SIZE }), (docs) => {
        if (docs.length === 0) return;
        oplog.unlogged(() => storage.write((unit) => {
          for (const doc of docs) unit.upsertBytes(coll, serializeDocument(doc));
        }));
      });
    }
  }

  let last = begin;
  const fromBegin = await run('local', { find: 'oplog.rs', filter: { ts: { $gte: begin.ts } }, batchSize: BATCH_SIZE });
  await eachBatch('local', 'oplog.rs', fromBegin, async (entries) => {
    if (entries.length === 0) return;
    await oplog.applyOplogEntriesGrouped(entries);
    last = entries[entries.length - 1]!;
  });

  const rbidAfter = (await run('admin', { replSetGetRBID: 1 })).rbid;
  if (Number(rbidAfter) !== Number(rbidBefore)) throw new Error(`the sync source ${host} rolled back during initial sync (rbid ${String(rbidBefore)} then ${String(rbidAfter)})`);
  logger.info({ c: 'INITSYNC', host, lastApplied: last.ts, databases: databases.length }, 'Initial sync done');
  return last;
}

