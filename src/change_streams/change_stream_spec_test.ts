import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { checkFollowingStages, parseChangeStreamSpec } from './change_stream_spec.js';
import { eventIdentifier, eventToken, highWaterMarkToken } from './resume_token.js';

const UUID = new Binary(Buffer.alloc(16, 7), Binary.SUBTYPE_UUID);
const ts = new Timestamp({ t: 10, i: 1 });
const token = eventToken(ts, 0, UUID, eventIdentifier('insert', { _id: 1 }));

function code(fn: () => unknown): number {
  try {
    fn();
  } catch (err) {
    return (err as MongoError).code;
  }
  return 0;
}

test('defaults, and the three scopes', () => {
  const spec = parseChangeStreamSpec({}, 'app', 'c');
  assert.deepEqual(spec, { scope: { kind: 'collection', db: 'app', coll: 'c' }, start: { kind: 'now' }, fullDocument: 'default', fullDocumentBeforeChange: 'off', showExpandedEvents: false, showSystemEvents: false, showMigrationEvents: false });
  assert.deepEqual(parseChangeStreamSpec({}, 'app', undefined).scope, { kind: 'database', db: 'app' });
  assert.deepEqual(parseChangeStreamSpec({ allChangesForCluster: true }, 'admin', undefined).scope, { kind: 'cluster' });
  assert.equal(parseChangeStreamSpec({ fullDocument: 'updateLookup', fullDocumentBeforeChange: 'required', showExpandedEvents: true }, 'app', 'c').fullDocument, 'updateLookup');
  const resumed = parseChangeStreamSpec({ resumeAfter: token }, 'app', 'c');
  assert.equal(resumed.start.kind, 'resumeAfter');
  assert.deepEqual(parseChangeStreamSpec({ startAtOperationTime: ts }, 'app', 'c').start, { kind: 'startAtOperationTime', ts });
});

test('bad options answer MongoDB\'s codes', () => {
  assert.equal(code(() => parseChangeStreamSpec(1, 'app', 'c')), 50808);
  assert.equal(code(() => parseChangeStreamSpec({ bogus: 1 }, 'app', 'c')), 40415);
  assert.equal(code(() => parseChangeStreamSpec({ fullDocument: 1 }, 'app', 'c')), 14);
  assert.equal(code(() => parseChangeStreamSpec({ fullDocument: 'always' }, 'app', 'c')), 2);
  assert.equal(code(() => parseChangeStreamSpec({ fullDocumentBeforeChange: 'updateLookup' }, 'app', 'c')), 2);
  assert.equal(code(() => parseChangeStreamSpec({ startAtOperationTime: 5 }, 'app', 'c')), 14);
  assert.equal(code(() => parseChangeStreamSpec({ resumeAfter: token, startAfter: token }, 'app', 'c')), 50865);
  assert.equal(code(() => parseChangeStreamSpec({ resumeAfter: token, startAtOperationTime: ts }, 'app', 'c')), 40674);
  assert.equal(code(() => parseChangeStreamSpec({ startAfter: token, startAtOperationTime: ts }, 'app', 'c')), 40674);
  assert.equal(code(() => parseChangeStreamSpec({ resumeAfter: eventToken(ts, 0, UUID, eventIdentifier('drop', undefined), true) }, 'app', 'c')), 260);
  assert.equal(code(() => parseChangeStreamSpec({ resumeAfter: eventToken(ts, 0, undefined, eventIdentifier('dropDatabase', undefined)) }, 'app', 'c')), 260);
  assert.equal(code(() => parseChangeStreamSpec({ resumeAfter: highWaterMarkToken(ts) }, 'app', 'c')), 0);
  assert.equal(code(() => parseChangeStreamSpec({ allChangesForCluster: true }, 'app', undefined)), 72);
  assert.equal(code(() => parseChangeStreamSpec({ allChangesForCluster: true }, 'admin', 'c')), 72);
  assert.equal(code(() => parseChangeStreamSpec({}, 'admin', undefined)), 73);
  assert.equal(code(() => parseChangeStreamSpec({}, 'local', 'c')), 73);
  assert.equal(code(() => parseChangeStreamSpec({}, 'config', 'c')), 73);
  assert.equal(code(() => parseChangeStreamSpec({}, 'app', 'system.views')), 73);
  assert.equal(code(() => parseChangeStreamSpec({ resumeAfter: { _data: 'zz' } }, 'app', 'c')), 9);
});

test('only the stages MongoDB allows may follow, $changeStreamSplitLargeEvent last', () => {
  checkFollowingStages([{ $match: {} }, { $project: { a: 1 } }, { $addFields: {} }, { $set: {} }, { $unset: 'x' }, { $replaceRoot: { newRoot: '$$ROOT' } }, { $replaceWith: '$$ROOT' }, { $redact: '$$KEEP' }, { $changeStreamSplitLargeEvent: {} }]);
  assert.equal(code(() => checkFollowingStages([{ $group: { _id: null } }])), 20);
  assert.equal(code(() => checkFollowingStages([{ $sort: { a: 1 } }])), 20);
  assert.equal(code(() => checkFollowingStages([{ $lookup: {} }])), 20);
  assert.equal(code(() => checkFollowingStages([{ $changeStream: {} }])), 40602);
  assert.equal(code(() => checkFollowingStages([{ $changeStreamSplitLargeEvent: {} }, { $match: {} }])), 7182802);
});
