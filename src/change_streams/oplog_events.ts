import type { Binary, Timestamp } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { UpdateDescription } from '../oplog/update_description.js';
import type { StreamScope } from './change_stream_spec.js';
import { disambiguatedPaths } from './disambiguated_paths.js';
import { eventIdentifier, eventToken, type ResumeToken } from './resume_token.js';

// One oplog entry as the change events it is to a stream (MongoDB's oplog match, transaction
// unwinding and transform stages, without their reads): an applyOps gives one event per inner
// operation in its order, all at the entry's time; a drop or rename of a watched collection, or
// the drop of a watched database, is followed by an invalidate. Internal databases, system
// collections and the writes of chunk migrations (`fromMigrate`) are no events.

export interface EventOptions {
  scope: StreamScope;
  showExpandedEvents: boolean;
  showSystemEvents: boolean;
  showMigrationEvents: boolean;
}

export interface StreamEvent {
  token: ResumeToken;
  event: Doc;
  // An invalidate: the stream ends after it.
  invalidate: boolean;
  // What fullDocument and fullDocumentBeforeChange are read for (insert, update, replace, delete).
  document?: { ns: string; uuid: Binary | undefined; documentKey: Doc; postImage: Doc | undefined };
}

const INTERNAL_DBS = new Set(['admin', 'config', 'local']);

function splitNs(ns: string): { db: string; coll: string } {
  const dot = ns.indexOf('.');
  return { db: ns.slice(0, dot), coll: ns.slice(dot + 1) };
}

// Whether changes of collection `ns` belong to the stream.
function watches(opts: EventOptions, ns: string): boolean {
  const { db, coll } = splitNs(ns);
  if (coll.startsWith('system.') && !opts.showSystemEvents) return false;
  switch (opts.scope.kind) {
    case 'collection': return db === opts.scope.db && coll === opts.scope.coll;
    case 'database': return db === opts.scope.db;
    case 'cluster': return !INTERNAL_DBS.has(db);
  }
}

// Whether an entry, by its `op` and `ns` alone, may give the stream an event: a CRUD entry of a
// collection it does not watch, or a no-op, gives none, so the reader need not decode the rest.
export function mayConcern(op: unknown, ns: unknown, opts: EventOptions): boolean {
  if (op === 'c') return true;
  if (op !== 'i' && op !== 'u' && op !== 'd') return false;
  return typeof ns === 'string' && watches(opts, ns);
}

export function eventsOfEntry(entry: Doc, opts: EventOptions): StreamEvent[] {
  const ts = entry.ts as Timestamp;
  const common: Doc = { clusterTime: ts, ...(entry.wall instanceof Date ? { wallTime: entry.wall } : {}) };
  if (entry.op === 'c' && isPlainObject(entry.o) && Array.isArray(entry.o.applyOps)) {
    const transaction = entry.lsid !== undefined && entry.stmtId === undefined;
    const session: Doc = transaction ? { lsid: entry.lsid, txnNumber: entry.txnNumber } : {};
    return (entry.o.applyOps as Doc[]).flatMap((op, i) => eventsOfOp(op, i, common, session, opts));
  }
  return eventsOfOp(entry, 0, common, {}, opts);
}

function eventsOfOp(op: Doc, txnOpIndex: number, common: Doc, session: Doc, opts: EventOptions): StreamEvent[] {
  if (op.fromMigrate === true && !opts.showMigrationEvents) return [];
  const ns = op.ns as string;
  const uuid = op.ui as Binary | undefined;
  const ts = common.clusterTime as Timestamp;
  const uuidField = opts.showExpandedEvents && uuid !== undefined ? { collectionUUID: uuid } : {};
  if (op.op === 'i' || op.op === 'u' || op.op === 'd') {
    if (!watches(opts, ns)) return [];
    const o = op.o as Doc;
    // The entry names the key: an insert's o2 (absent when the collection is not sharded), an
    // update's o2, a delete's o.
    const documentKey = op.op === 'i' ? (isPlainObject(op.o2) ? op.o2 : { _id: o._id }) : op.op === 'u' ? (op.o2 as Doc) : o;
    const desc = op.updateDescription as UpdateDescription | undefined;
    const operationType = op.op === 'i' ? 'insert' : op.op === 'd' ? 'delete' : desc === undefined ? 'replace' : 'update';
    const token = eventToken(ts, txnOpIndex, uuid, eventIdentifier(operationType, documentKey));
    const event: Doc = { _id: token, operationType, ...common, ...uuidField };
    if (operationType === 'insert' || operationType === 'replace') event.fullDocument = o;
    event.ns = splitNs(ns);
    event.documentKey = documentKey;
    if (desc !== undefined) {
      event.updateDescription = { ...desc };
      if (opts.showExpandedEvents) (event.updateDescription as Doc).disambiguatedPaths = disambiguatedPaths(desc, o);
    }
    Object.assign(event, session);
    return [{ token, event, invalidate: false, document: { ns, uuid, documentKey, postImage: op.op === 'd' ? undefined : o } }];
  }
  if (op.op !== 'c') return [];
  return commandEvents(op, txnOpIndex, common, uuidField, opts);
}

function commandEvents(op: Doc, txnOpIndex: number, common: Doc, uuidField: Doc, opts: EventOptions): StreamEvent[] {
  const o = op.o as Doc;
  const db = splitNs(op.ns as string).db;
  const uuid = op.ui as Binary | undefined;
  const ts = common.clusterTime as Timestamp;
  const make = (operationType: string, fields: Doc, description?: Doc): StreamEvent => {
    const token = eventToken(ts, txnOpIndex, uuid, eventIdentifier(operationType, undefined, description));
    const event: Doc = { _id: token, operationType, ...common, ...uuidField, ...fields };
    if (description !== undefined && opts.showExpandedEvents) event.operationDescription = description;
    return { token, event, invalidate: false };
  };
  // The invalidate that follows an event, with that event's token marked fromInvalidate.
  const invalidating = (e: StreamEvent, description?: Doc): StreamEvent[] => {
    const token = eventToken(ts, txnOpIndex, uuid, eventIdentifier(e.event.operationType as string, undefined, description), true);
    return [e, { token, event: { _id: token, operationType: 'invalidate', ...common }, invalidate: true }];
  };
  const isCollectionStream = opts.scope.kind === 'collection';
  if (typeof o.drop === 'string') {
    const ns = `${db}.${o.drop}`;
    if (!watches(opts, ns)) return [];
    const e = make('drop', { ns: { db, coll: o.drop } });
    return isCollectionStream ? invalidating(e) : [e];
  }
  if (typeof o.renameCollection === 'string' && typeof o.to === 'string') {
    const from = o.renameCollection;
    if (!watches(opts, from) && !watches(opts, o.to)) return [];
    const to = splitNs(o.to);
    const description = { to };
    const e = make('rename', { ns: splitNs(from), to }, description);
    return isCollectionStream ? invalidating(e, description) : [e];
  }
  if (o.dropDatabase !== undefined) {
    if (opts.scope.kind === 'collection' || (opts.scope.kind === 'database' && opts.scope.db !== db) || (opts.scope.kind === 'cluster' && INTERNAL_DBS.has(db))) return [];
    const e = make('dropDatabase', { ns: { db } });
    return opts.scope.kind === 'database' ? invalidating(e) : [e];
  }
  if (!opts.showExpandedEvents) return [];
  if (typeof o.create === 'string') {
    if (!watches(opts, `${db}.${o.create}`)) return [];
    const { create: _create, ...options } = o;
    return [make('create', { ns: { db, coll: o.create } }, options)];
  }
  if (typeof o.createIndexes === 'string') {
    if (!watches(opts, `${db}.${o.createIndexes}`)) return [];
    const { createIndexes: _coll, ...spec } = o;
    return [make('createIndexes', { ns: { db, coll: o.createIndexes } }, { indexes: [spec] })];
  }
  if (typeof o.dropIndexes === 'string') {
    if (!watches(opts, `${db}.${o.dropIndexes}`)) return [];
    const spec = isPlainObject(op.o2) ? op.o2 : { name: o.index };
    return [make('dropIndexes', { ns: { db, coll: o.dropIndexes } }, { indexes: [spec] })];
  }
  if (typeof o.collMod === 'string') {
    if (!watches(opts, `${db}.${o.collMod}`)) return [];
    const { collMod: _coll, ...changed } = o;
    const before = isPlainObject(op.o2) && isPlainObject(op.o2.collectionOptions_old) ? { stateBeforeChange: { collectionOptions: op.o2.collectionOptions_old } } : {};
    return [make('modify', { ns: { db, coll: o.collMod }, ...before }, changed)];
  }
  return [];
}
