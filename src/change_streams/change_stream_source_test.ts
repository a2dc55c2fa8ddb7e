import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { withOplog } from '../oplog/oplog_test_util.js';
import { parseChangeStreamSpec } from './change_stream_spec.js';
import { ChangeStreamSource } from './change_stream_source.js';
import { compareTokens, decodeResumeToken, eventIdentifier, eventToken, type ResumeToken } from './resume_token.js';

function drain(source: ChangeStreamSource): Doc[] {
  const out: Doc[] = [];
  for (let r = source.next(); r.done !== true; r = source.next()) out.push(r.value.doc);
  return out;
}

test('reads only majority-committed entries; the postBatchResumeToken moves to the commit point and never back', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  const times = [1, 2, 3].map((i) => storage.write((unit) => {
    unit.insert(coll, { _id: i });
    return unit.timestamp!;
  }));
  storage.write((unit) => unit.insert(storage.ensureCollection('app.other').coll, { _id: 'x' }));
  let committed: Timestamp | undefined = times[1];
  const spec = parseChangeStreamSpec({ startAtOperationTime: times[0] }, 'app', 'c');
  const source = new ChangeStreamSource({ storage, spec, transform: (e) => e, member: { committed: () => committed } });
  const first = drain(source);
  assert.deepEqual(first.map((e) => (e.documentKey as Doc)._id), [1, 2]);
  // The commit point is the last event's time: that event, which sorts after the mark at its time.
  assert.deepEqual(source.postBatchResumeToken(first.at(-1), false), first[1]!._id);
  committed = oplog.reads.lastOpTime()!.ts;
  const rest = drain(source);
  assert.deepEqual(rest.map((e) => (e.documentKey as Doc)._id), [3]);
  const idle = source.postBatchResumeToken(undefined, false);
  assert.equal(decodeResumeToken(idle).tokenType, 0, 'a high-water mark once all that is committed was read');
  assert.ok(decodeResumeToken(idle).clusterTime.equals(committed), 'past the other collection\'s insert');
  assert.ok(compareTokens(idle, rest[0]!._id as ResumeToken) > 0);
  committed = times[0];
  assert.deepEqual(source.postBatchResumeToken(undefined, false), idle, 'never backwards');
}));

test('resumeAfter returns what follows its event; a token not found is 280, history gone 286, both non-resumable', withOplog({}, (storage) => {
  const coll = storage.createCollection('app.c');
  const times = [1, 2, 3].map((i) => storage.write((unit) => {
    unit.insert(coll, { _id: i });
    return unit.timestamp!;
  }));
  const member = { committed: () => times[2] };
  const all = drain(new ChangeStreamSource({ storage, spec: parseChangeStreamSpec({ startAtOperationTime: times[0] }, 'app', 'c'), transform: (e) => e, member }));
  assert.equal(all.length, 3);
  const resumed = new ChangeStreamSource({ storage, spec: parseChangeStreamSpec({ resumeAfter: all[0]!._id }, 'app', 'c'), transform: (e) => e, member });
  assert.deepEqual(drain(resumed).map((e) => (e.documentKey as Doc)._id), [2, 3]);
  const stranger = eventToken(times[0]!, 0, coll.entry.uuid, eventIdentifier('insert', { _id: 99 }));
  const lost = new ChangeStreamSource({ storage, spec: parseChangeStreamSpec({ resumeAfter: stranger }, 'app', 'c'), transform: (e) => e, member });
  assert.throws(() => drain(lost), (err: unknown) => err instanceof MongoError && err.code === 280 && err.errorLabels.includes('NonResumableChangeStreamError'));
  assert.throws(() => new ChangeStreamSource({ storage, spec: parseChangeStreamSpec({ startAtOperationTime: new Timestamp({ t: 1, i: 1 }) }, 'app', 'c'), transform: (e) => e, member }),
    (err: unknown) => err instanceof MongoError && err.code === 286 && err.errorLabels.includes('NonResumableChangeStreamError'));
}));

test('a stage that changes _id fails the stream with 280; one that drops an event skips it', withOplog({}, (storage) => {
  const coll = storage.createCollection('app.c');
  const at = storage.write((unit) => {
    unit.insert(coll, { _id: 1 });
    return unit.timestamp!;
  });
  storage.write((unit) => unit.insert(coll, { _id: 2 }));
  const member = { committed: () => storage.timestamps.reserve() };
  const spec = parseChangeStreamSpec({ startAtOperationTime: at }, 'app', 'c');
  const changed = new ChangeStreamSource({ storage, spec, transform: (e) => ({ ...e, _id: 1 }), member });
  assert.throws(() => drain(changed), (err: unknown) => err instanceof MongoError && err.code === 280);
  const filtered = new ChangeStreamSource({ storage, spec, transform: (e) => ((e.documentKey as Doc)._id === 1 ? undefined : e), member });
  assert.deepEqual(drain(filtered).map((e) => (e.documentKey as Doc)._id), [2]);
}));

test('once every committed entry is read the postBatchResumeToken is the member\'s promise, which is told of an entry still waiting for a majority', withOplog({}, (storage) => {
  const coll = storage.createCollection('app.c');
  const times = [1, 2].map((i) => storage.write((unit) => {
    unit.insert(coll, { _id: i });
    return unit.timestamp!;
  }));
  let committed = times[0]!;
  const asked: (Timestamp | undefined)[] = [];
  const later = new Timestamp({ t: times[1]!.t + 100, i: 1 });
  const member = {
    committed: () => committed,
    promised: (c: Timestamp, uncommitted: Timestamp | undefined) => {
      asked.push(uncommitted);
      return uncommitted === undefined ? later : c;
    },
  };
  const source = new ChangeStreamSource({ storage, spec: parseChangeStreamSpec({ startAtOperationTime: times[0] }, 'app', 'c'), transform: (e) => e, member });
  assert.equal(drain(source).length, 1);
  assert.ok(asked.at(-1)?.equals(times[1]!), 'the entry after the commit point');
  assert.ok(decodeResumeToken(source.postBatchResumeToken(undefined, false)).clusterTime.equals(times[0]!));
  committed = times[1]!;
  assert.equal(drain(source).length, 1);
  assert.equal(asked.at(-1), undefined);
  const idle = decodeResumeToken(source.postBatchResumeToken(undefined, false));
  assert.equal(idle.tokenType, 0);
  assert.ok(idle.clusterTime.equals(later), 'the promise, past every entry written');
}));
