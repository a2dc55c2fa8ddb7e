import type { AbstractCursor, BulkWriteResult, ChangeStream, ClientSession, Collection, Db, Document, MongoClient, UpdateResult } from 'mongodb';
import { optionsOf } from './arguments.js';
import type { Entity, EntityKind } from './entities.js';
import type { Doc, Operation as TestOperation } from './test_file.js';
import { transactionOptionsOf } from './transactions.js';

// Entity operations: one function per operation name and entity type, each a thin call of the
// official driver. Arguments arrive with `session` already resolved to a ClientSession.
// withTransaction's callback is a list of operations the runner runs, given as `runOperations`.

export interface OperationResult {
  value: unknown;
  /** An iterable of documents: each element is matched as a root-level document. */
  documents?: boolean;
  /** What saveResultAsEntity stores when the result is not a plain BSON value. */
  entity?: Entity;
}

/** Runs operations of the test (with their assertions) in order, as the runner does. */
export type OperationsRunner = (operations: TestOperation[]) => Promise<void>;

type Operation<T> = (target: T, args: Doc) => Promise<OperationResult>;
type SessionOperation = (session: ClientSession, args: Doc, runOperations: OperationsRunner) => Promise<OperationResult>;

const value = (v: unknown): OperationResult => ({ value: v });
const documents = (v: unknown[]): OperationResult => ({ value: v, documents: true });
const cursorEntity = (cursor: AbstractCursor): OperationResult => ({ value: cursor, entity: { kind: 'cursor', cursor } });

function arg<T>(args: Doc, name: string): T {
  if (!(name in args)) throw new Error(`missing argument ${name}`);
  return args[name] as T;
}

/** BulkWriteResult as the CRUD spec's document; insertedIds only when the write fully succeeded. */
export function bulkWriteResultDocument(r: BulkWriteResult, withInsertedIds: boolean): Doc {
  const doc: Doc = {
    insertedCount: r.insertedCount,
    matchedCount: r.matchedCount,
    modifiedCount: r.modifiedCount,
    deletedCount: r.deletedCount,
    upsertedCount: r.upsertedCount,
    upsertedIds: r.upsertedIds,
  };
  if (withInsertedIds) doc.insertedIds = r.insertedIds;
  return doc;
}

/** The driver reports "no upsert" as upsertedId: null; the CRUD spec leaves it unset. */
function updateResultDocument(r: UpdateResult | Document): Doc {
  const { acknowledged: _acknowledged, upsertedId, ...rest } = r as Doc;
  return upsertedId === null || upsertedId === undefined ? rest : { ...rest, upsertedId };
}

async function createdCursor(cursor: AbstractCursor): Promise<OperationResult> {
  // hasNext runs the command that creates the server-side cursor without consuming a document.
  await cursor.hasNext();
  return cursorEntity(cursor);
}

// The driver opens a change stream on its first iteration; the spec's createChangeStream runs the
// aggregate at once (its errors are the operation's), without taking an event.
async function createdChangeStream(watchable: { watch(pipeline: Document[], options: Doc): ChangeStream }, a: Doc): Promise<OperationResult> {
  const stream = watchable.watch((a.pipeline as Document[] | undefined) ?? [], optionsOf(a, ['pipeline']));
  await (stream as unknown as { cursor: { cursorInit(): Promise<void> } }).cursor.cursorInit();
  return cursorEntity(stream as unknown as AbstractCursor);
}

const collectionOperations: Record<string, Operation<Collection>> = {
  aggregate: async (c, a) => documents(await c.aggregate(arg(a, 'pipeline'), optionsOf(a, ['pipeline'])).toArray()),
  bulkWrite: async (c, a) => value(bulkWriteResultDocument(await c.bulkWrite(arg(a, 'requests'), optionsOf(a, ['requests'])), true)),
  count: async (c, a) => value(await c.count(a.filter as Doc | undefined, optionsOf(a, ['filter']))),
  countDocuments: async (c, a) => value(await c.countDocuments(arg(a, 'filter'), optionsOf(a, ['filter']))),
  createChangeStream: async (c, a) => createdChangeStream(c, a),
  createFindCursor: async (c, a) => createdCursor(c.find(arg(a, 'filter'), optionsOf(a, ['filter']))),
  createIndex: async (c, a) => value(await c.createIndex(arg(a, 'keys'), optionsOf(a, ['keys']))),
  deleteMany: async (c, a) => value(await c.deleteMany(arg(a, 'filter'), optionsOf(a, ['filter']))),
  deleteOne: async (c, a) => value(await c.deleteOne(arg(a, 'filter'), optionsOf(a, ['filter']))),
  distinct: async (c, a) => value(await c.distinct(arg<string>(a, 'fieldName'), (a.filter as Doc | undefined) ?? {}, optionsOf(a, ['fieldName', 'filter']))),
  drop: async (c, a) => value(await c.drop(optionsOf(a, []))),
  dropIndex: async (c, a) => value(await c.dropIndex(arg(a, 'name'), optionsOf(a, ['name']))),
  dropIndexes: async (c, a) => value(await c.dropIndexes(optionsOf(a, []))),
  estimatedDocumentCount: async (c, a) => value(await c.estimatedDocumentCount(optionsOf(a, []))),
  find: async (c, a) => documents(await c.find(arg(a, 'filter'), optionsOf(a, ['filter'])).toArray()),
  findOne: async (c, a) => value(await c.findOne(arg(a, 'filter'), optionsOf(a, ['filter']))),
  findOneAndDelete: async (c, a) => value(await c.findOneAndDelete(arg(a, 'filter'), optionsOf(a, ['filter']))),
  findOneAndReplace: async (c, a) => value(await c.findOneAndReplace(arg(a, 'filter'), arg(a, 'replacement'), optionsOf(a, ['filter', 'replacement']))),
  findOneAndUpdate: async (c, a) => value(await c.findOneAndUpdate(arg(a, 'filter'), arg(a, 'update'), optionsOf(a, ['filter', 'update']))),
  insertMany: async (c, a) => value(await c.insertMany(arg(a, 'documents'), optionsOf(a, ['documents']))),
  insertOne: async (c, a) => value(await c.insertOne(arg(a, 'document'), optionsOf(a, ['document']))),
  listIndexes: async (c, a) => documents(await c.listIndexes(optionsOf(a, [])).toArray()),
  rename: async (c, a) => {
    await c.rename(arg(a, 'to'), optionsOf(a, ['to']));
    return value(undefined);
  },
  replaceOne: async (c, a) => value(updateResultDocument(await c.replaceOne(arg(a, 'filter'), arg(a, 'replacement'), optionsOf(a, ['filter', 'replacement'])))),
  updateMany: async (c, a) => value(updateResultDocument(await c.updateMany(arg(a, 'filter'), arg(a, 'update'), optionsOf(a, ['filter', 'update'])))),
  updateOne: async (c, a) => value(updateResultDocument(await c.updateOne(arg(a, 'filter'), arg(a, 'update'), optionsOf(a, ['filter', 'update'])))),
};

const databaseOperations: Record<string, Operation<Db>> = {
  aggregate: async (d, a) => documents(await d.aggregate(arg(a, 'pipeline'), optionsOf(a, ['pipeline'])).toArray()),
  createCollection: async (d, a) => {
    await d.createCollection(arg(a, 'collection'), optionsOf(a, ['collection']));
    return value(undefined);
  },
  createChangeStream: async (d, a) => createdChangeStream(d, a),
  createCommandCursor: async (d, a) => createdCursor(d.runCursorCommand(arg(a, 'command'), optionsOf(a, ['command', 'commandName']))),
  dropCollection: async (d, a) => value(await d.dropCollection(arg(a, 'collection'), optionsOf(a, ['collection']))),
  listCollectionNames: async (d, a) => {
    const infos = await d.listCollections((a.filter as Doc | undefined) ?? {}, { ...optionsOf(a, ['filter']), nameOnly: true }).toArray();
    return value(infos.map((i) => i.name));
  },
  listCollections: async (d, a) => documents(await d.listCollections((a.filter as Doc | undefined) ?? {}, optionsOf(a, ['filter'])).toArray()),
  modifyCollection: async (d, a) => {
    const { collection, session, ...changes } = a;
    return value(await d.command({ collMod: collection, ...changes }, { session: session as ClientSession | undefined }));
  },
  runCommand: async (d, a) => value(await d.command(arg(a, 'command'), optionsOf(a, ['command', 'commandName']))),
  runCursorCommand: async (d, a) => documents(await d.runCursorCommand(arg(a, 'command'), optionsOf(a, ['command', 'commandName'])).toArray()),
};

const clientOperations: Record<string, Operation<MongoClient>> = {
  createChangeStream: async (c, a) => createdChangeStream(c, a),
  close: async (c) => {
    await c.close();
    return value(undefined);
  },
  // As the causal consistency tests call it: on a client, naming the database.
  dropDatabase: async (c, a) => value(await c.db(arg<string>(a, 'database')).dropDatabase(optionsOf(a, ['database']))),
  listDatabaseNames: async (c, a) => {
    const reply = await c.db('admin').admin().listDatabases({ ...optionsOf(a, []), nameOnly: true });
    return value(reply.databases.map((d) => d.name));
  },
  listDatabases: async (c, a) => documents((await c.db('admin').admin().listDatabases(optionsOf(a, []))).databases),
};

const cursorOperations: Record<string, Operation<AbstractCursor>> = {
  close: async (c) => {
    // The spec asks runners to swallow killCursors errors; events show what happened.
    await c.close().catch(() => undefined);
    return value(undefined);
  },
  iterateOnce: async (c) => value(await c.tryNext()),
  iterateUntilDocumentOrError: async (c) => value(await c.next()),
};

const sessionOperations: Record<string, SessionOperation> = {
  abortTransaction: async (s) => {
    await s.abortTransaction();
    return value(undefined);
  },
  commitTransaction: async (s) => {
    await s.commitTransaction();
    return value(undefined);
  },
  endSession: async (s) => {
    await s.endSession();
    return value(undefined);
  },
  startTransaction: async (s, a) => {
    s.startTransaction(transactionOptionsOf(a));
    return value(undefined);
  },
  withTransaction: async (s, a, runOperations) => {
    await s.withTransaction(() => runOperations(arg(a, 'callback')), transactionOptionsOf(a));
    return value(undefined);
  },
};

export function entityOperation(name: string, target: Entity, runOperations: OperationsRunner): ((args: Doc) => Promise<OperationResult>) | undefined {
  switch (target.kind) {
    case 'collection': {
      const op = collectionOperations[name];
      return op && ((args) => op(target.collection, args));
    }
    case 'database': {
      const op = databaseOperations[name];
      return op && ((args) => op(target.db, args));
    }
    case 'client': {
      const op = clientOperations[name];
      return op && ((args) => op(target.client, args));
    }
    case 'cursor': {
      const op = cursorOperations[name];
      return op && ((args) => op(target.cursor, args));
    }
    case 'session': {
      const op = sessionOperations[name];
      return op && ((args) => op(target.session, args, runOperations));
    }
    default:
      return undefined;
  }
}

export const ENTITY_OPERATION_NAMES: ReadonlyMap<EntityKind, ReadonlySet<string>> = new Map<EntityKind, ReadonlySet<string>>([
  ['collection', new Set(Object.keys(collectionOperations))],
  ['database', new Set(Object.keys(databaseOperations))],
  ['client', new Set(Object.keys(clientOperations))],
  ['cursor', new Set(Object.keys(cursorOperations))],
  ['session', new Set(Object.keys(sessionOperations))],
]);
