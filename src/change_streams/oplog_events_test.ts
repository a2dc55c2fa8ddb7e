import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { eventsOfEntry, mayConcern, type EventOptions } from './oplog_events.js';
import { compareTokens, decodeResumeToken } from './resume_token.js';

const UUID = new Binary(Buffer.alloc(16, 1), Binary.SUBTYPE_UUID);
const ts = new Timestamp({ t: 100, i: 2 });
const wall = new Date(100_000);
const base = { ts, t: Long.fromNumber(1), v: Long.fromNumber(2), wall };
const opts = (scope: EventOptions['scope'], more: Partial<EventOptions> = {}): EventOptions => ({ scope, showExpandedEvents: false, showSystemEvents: false, showMigrationEvents: false, ...more });
const coll = opts({ kind: 'collection', db: 'app', coll: 'c' });
const types = (entry: Doc, o: EventOptions): string[] => eventsOfEntry(entry, o).map((e) => e.event.operationType as string);

test('CRUD entries: insert, update (with its description), replace, delete, with MongoDB\'s fields', () => {
  const [insert] = eventsOfEntry({ ...base, op: 'i', ns: 'app.c', ui: UUID, o: { _id: 1, a: 1 } }, coll);
  assert.deepEqual({ ...insert!.event, _id: undefined }, { _id: undefined, operationType: 'insert', clusterTime: ts, wallTime: wall, fullDocument: { _id: 1, a: 1 }, ns: { db: 'app', coll: 'c' }, documentKey: { _id: 1 } });
  assert.deepEqual(insert!.event._id, insert!.token);
  const data = decodeResumeToken(insert!.token);
  assert.deepEqual(data.eventIdentifier, { operationType: 'insert', documentKey: { _id: 1 } });
  const desc = { updatedFields: { 'arr.0': 5 }, removedFields: [], truncatedArrays: [] };
  const [update] = eventsOfEntry({ ...base, op: 'u', ns: 'app.c', ui: UUID, o: { _id: 1, arr: [5] }, o2: { _id: 1 }, updateDescription: desc }, coll);
  assert.equal(update!.event.operationType, 'update');
  assert.deepEqual(update!.event.updateDescription, desc);
  assert.equal(update!.event.fullDocument, undefined);
  const [expanded] = eventsOfEntry({ ...base, op: 'u', ns: 'app.c', ui: UUID, o: { _id: 1, arr: [5] }, o2: { _id: 1 }, updateDescription: desc }, { ...coll, showExpandedEvents: true });
  assert.deepEqual((expanded!.event.updateDescription as Doc).disambiguatedPaths, { 'arr.0': ['arr', 0] });
  assert.deepEqual(expanded!.event.collectionUUID, UUID);
  assert.deepEqual(types({ ...base, op: 'u', ns: 'app.c', o: { _id: 1, b: 1 }, o2: { _id: 1 } }, coll), ['replace']);
  const [del] = eventsOfEntry({ ...base, op: 'd', ns: 'app.c', o: { _id: 1 } }, coll);
  assert.deepEqual([del!.event.operationType, del!.event.documentKey, del!.event.fullDocument], ['delete', { _id: 1 }, undefined]);
});

test('scopes: a collection, a database, the cluster without internal databases or system collections', () => {
  const insert = (ns: string): Doc => ({ ...base, op: 'i', ns, o: { _id: 1 } });
  assert.deepEqual(types(insert('app.d'), coll), []);
  assert.deepEqual(types(insert('app.d'), opts({ kind: 'database', db: 'app' })), ['insert']);
  assert.deepEqual(types(insert('other.d'), opts({ kind: 'database', db: 'app' })), []);
  assert.deepEqual(types(insert('other.d'), opts({ kind: 'cluster' })), ['insert']);
  for (const ns of ['admin.x', 'config.x', 'local.x', 'app.system.views']) assert.deepEqual(types(insert(ns), opts({ kind: 'cluster' })), [], ns);
  assert.deepEqual(types(insert('app.system.views'), opts({ kind: 'cluster' }, { showSystemEvents: true })), ['insert']);
  assert.deepEqual(types({ ...insert('app.c'), fromMigrate: true }, coll), [], 'a migration\'s write is no event');
  assert.deepEqual(types({ ...insert('app.c'), fromMigrate: true }, { ...coll, showMigrationEvents: true }), ['insert']);
});

test('drop and rename invalidate a collection stream, dropDatabase a database stream; the cluster stream goes on', () => {
  const drop = { ...base, op: 'c', ns: 'app.$cmd', ui: UUID, o: { drop: 'c' }, o2: { numRecords: 1 } };
  const events = eventsOfEntry(drop, coll);
  assert.deepEqual(events.map((e) => e.event.operationType), ['drop', 'invalidate']);
  assert.equal(events[1]!.invalidate, true);
  assert.equal(decodeResumeToken(events[1]!.token).fromInvalidate, true);
  assert.ok(compareTokens(events[0]!.token, events[1]!.token) < 0);
  assert.deepEqual(types(drop, opts({ kind: 'database', db: 'app' })), ['drop']);
  const rename = { ...base, op: 'c', ns: 'app.$cmd', ui: UUID, o: { renameCollection: 'app.c', to: 'app.d', stayTemp: false, dropTarget: false } };
  const [renamed] = eventsOfEntry(rename, coll);
  assert.deepEqual([renamed!.event.ns, renamed!.event.to], [{ db: 'app', coll: 'c' }, { db: 'app', coll: 'd' }]);
  assert.deepEqual(types(rename, coll), ['rename', 'invalidate']);
  const dropDb = { ...base, op: 'c', ns: 'app.$cmd', o: { dropDatabase: 1 } };
  assert.deepEqual(types(dropDb, coll), []);
  assert.deepEqual(types(dropDb, opts({ kind: 'database', db: 'app' })), ['dropDatabase', 'invalidate']);
  assert.deepEqual(types(dropDb, opts({ kind: 'cluster' })), ['dropDatabase']);
});

test('DDL events only with showExpandedEvents: create, createIndexes, dropIndexes, modify', () => {
  const expanded = { ...coll, showExpandedEvents: true };
  const create = { ...base, op: 'c', ns: 'app.$cmd', ui: UUID, o: { create: 'c', idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } } };
  assert.deepEqual(types(create, coll), []);
  const [created] = eventsOfEntry(create, expanded);
  assert.deepEqual([created!.event.operationType, created!.event.operationDescription], ['create', { idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } }]);
  const [index] = eventsOfEntry({ ...base, op: 'c', ns: 'app.$cmd', ui: UUID, o: { createIndexes: 'c', v: 2, key: { a: 1 }, name: 'a_1' } }, expanded);
  assert.deepEqual(index!.event.operationDescription, { indexes: [{ v: 2, key: { a: 1 }, name: 'a_1' }] });
  const [dropped] = eventsOfEntry({ ...base, op: 'c', ns: 'app.$cmd', ui: UUID, o: { dropIndexes: 'c', index: 'a_1' }, o2: { v: 2, key: { a: 1 }, name: 'a_1' } }, expanded);
  assert.deepEqual([dropped!.event.operationType, dropped!.event.operationDescription], ['dropIndexes', { indexes: [{ v: 2, key: { a: 1 }, name: 'a_1' }] }]);
  const [modified] = eventsOfEntry({ ...base, op: 'c', ns: 'app.$cmd', ui: UUID, o: { collMod: 'c', validationLevel: 'off' }, o2: { collectionOptions_old: { validationLevel: 'strict' } } }, expanded);
  assert.deepEqual([modified!.event.operationType, modified!.event.operationDescription, modified!.event.stateBeforeChange], ['modify', { validationLevel: 'off' }, { collectionOptions: { validationLevel: 'strict' } }]);
});

test('a transaction\'s operations are events at its time, in order, with its session; a retryable write\'s carry none', () => {
  const lsid = { id: new Binary(Buffer.alloc(16, 9), Binary.SUBTYPE_UUID) };
  const applyOps = [
    { op: 'i', ns: 'app.c', ui: UUID, o: { _id: 2 } },
    { op: 'i', ns: 'app.other', o: { _id: 3 } },
    { op: 'd', ns: 'app.c', ui: UUID, o: { _id: 1 } },
  ];
  const txn = { ...base, op: 'c', ns: 'admin.$cmd', o: { applyOps }, lsid, txnNumber: Long.fromNumber(4), prevOpTime: {} };
  const events = eventsOfEntry(txn, coll);
  assert.deepEqual(events.map((e) => e.event.operationType), ['insert', 'delete']);
  assert.deepEqual(events.map((e) => decodeResumeToken(e.token).txnOpIndex), [0, 2]);
  assert.ok(events.every((e) => e.event.clusterTime === ts && e.event.lsid === lsid && Number(e.event.txnNumber) === 4));
  assert.ok(compareTokens(events[0]!.token, events[1]!.token) < 0);
  const retryable = eventsOfEntry({ ...txn, stmtId: [0, 1, 2] }, coll);
  assert.ok(retryable.every((e) => e.event.lsid === undefined));
});

test('an entry is decoded only if its op and namespace may concern the stream', () => {
  assert.equal(mayConcern('i', 'app.c', coll), true);
  assert.equal(mayConcern('u', 'app.d', coll), false);
  assert.equal(mayConcern('n', '', coll), false);
  assert.equal(mayConcern('c', 'admin.$cmd', coll), true);
  assert.equal(mayConcern('d', 'other.x', opts({ kind: 'cluster' })), true);
  assert.equal(mayConcern('d', 'config.x', opts({ kind: 'cluster' })), false);
});

test('on a sharded collection the document key is the entry\'s: shard key fields and _id', () => {
  const key = { region: 'eu', _id: 7 };
  const [insert] = eventsOfEntry({ ...base, op: 'i', ns: 'app.c', o: { _id: 7, region: 'eu', x: 1 }, o2: key }, coll);
  const [update] = eventsOfEntry({ ...base, op: 'u', ns: 'app.c', o: { _id: 7, region: 'eu', x: 2 }, o2: key, updateDescription: { updatedFields: { x: 2 }, removedFields: [], truncatedArrays: [] } }, coll);
  const [del] = eventsOfEntry({ ...base, op: 'd', ns: 'app.c', o: key }, coll);
  assert.deepEqual([insert!.event.documentKey, update!.event.documentKey, del!.event.documentKey], [key, key, key]);
  assert.deepEqual(decodeResumeToken(del!.token).eventIdentifier, { operationType: 'delete', documentKey: key });
});
