import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, Timestamp } from 'bson';
import { BSON } from 'mongodb';
import { MongoError } from '../base/errors.js';
import { deserializeDocument, serializeDocument } from '../bson/values.js';
import { LogicalClock } from './logical_clock.js';
import {
  CLUSTER_TIME_ELEMENT_LENGTH, clusterTimeElementTimeAt, clusterTimeMetadata, clusterTimeMetadataBytes, clusterTimeOf, clusterTimeOfBytes,
  networkGossip, readTimestamp, replyClusterTimeAt, replyOperationTimeAt, replyTimesAt, REPLY_TIMES_LENGTH, writeClusterTimeElement, writeReplyTimes,
} from './logical_time_metadata.js';

const time = new Timestamp({ t: 1_700_000_000, i: 42 });
const later = new Timestamp({ t: 1_700_000_100, i: 1 });

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof MongoError ? err.code : -1;
  }
  return undefined;
}

describe('$clusterTime metadata', () => {
  it('is {clusterTime, signature: {hash: 20 zero bytes, keyId: Long(0)}}', () => {
    assert.deepEqual(deserializeDocument(clusterTimeMetadataBytes(time)), { clusterTime: time, signature: { hash: new Binary(Buffer.alloc(20), 0), keyId: Long.fromNumber(0) } });
    assert.deepEqual(clusterTimeMetadataBytes(time), serializeDocument(clusterTimeMetadata(time)));
  });

  it('is read back from a document, and refused as MongoDB refuses a malformed one', () => {
    assert.deepEqual(clusterTimeOf(clusterTimeMetadata(time)), time);
    assert.equal(codeOf(() => clusterTimeOf(5)), 14);
    assert.equal(codeOf(() => clusterTimeOf({ signature: { hash: new Binary(Buffer.alloc(20)), keyId: 0 } })), 4, 'no clusterTime');
    assert.equal(codeOf(() => clusterTimeOf({ clusterTime: 5, signature: {} })), 14, 'a clusterTime that is no Timestamp');
    assert.equal(codeOf(() => clusterTimeOf({ clusterTime: time })), 4, 'no signature');
    assert.equal(codeOf(() => clusterTimeOf({ clusterTime: time, signature: { keyId: 0 } })), 4, 'no hash');
    assert.equal(codeOf(() => clusterTimeOf({ clusterTime: time, signature: { hash: new Binary(Buffer.alloc(20)), keyId: 'x' } })), 14, 'a keyId that is no number');
  });

  it('is read in place from the bytes docshard writes, and decoded from any other', () => {
    assert.deepEqual(clusterTimeOfBytes(clusterTimeMetadataBytes(time)), time);
    const reordered = serializeDocument({ signature: { hash: new Binary(Buffer.alloc(20), 0), keyId: 0 }, clusterTime: time });
    assert.deepEqual(clusterTimeOfBytes(reordered), time);
    assert.equal(codeOf(() => clusterTimeOfBytes(serializeDocument({ clusterTime: time }))), 4);
  });

  it('is read in place as the driver sends it back, its keyId an int32', () => {
    const wide = new Timestamp({ t: 0x12345678, i: 0x9abcdef0 });
    const echoed = BSON.serialize(BSON.deserialize(clusterTimeMetadataBytes(wide)));
    assert.notEqual(echoed.length, clusterTimeMetadataBytes(wide).length, 'the driver writes the keyId otherwise');
    assert.deepEqual(clusterTimeOfBytes(Buffer.from(echoed)), wide);
  });

  it("is a request's element, its time written where clusterTimeElementTimeAt says", () => {
    const out = Buffer.alloc(4 + CLUSTER_TIME_ELEMENT_LENGTH + 1);
    writeClusterTimeElement(out, 4, new Timestamp({ t: 0, i: 0 }));
    out.writeInt32LE(out.length, 0);
    assert.deepEqual(deserializeDocument(out), { $clusterTime: clusterTimeMetadata(new Timestamp({ t: 0, i: 0 })) });
    assert.deepEqual(readTimestamp(out, clusterTimeElementTimeAt(4)), new Timestamp({ t: 0, i: 0 }));
    writeClusterTimeElement(out, 4, time);
    assert.deepEqual(deserializeDocument(out), { $clusterTime: clusterTimeMetadata(time) });
  });
});

describe("a node's reply ending", () => {
  const reply = serializeDocument({ n: 1, ok: 1, $clusterTime: clusterTimeMetadata(later), operationTime: time });

  it('is found at the end of a reply and its times read in place', () => {
    const at = replyTimesAt(reply);
    assert.equal(at, reply.length - REPLY_TIMES_LENGTH);
    assert.deepEqual(readTimestamp(reply, replyClusterTimeAt(at)), later);
    assert.deepEqual(readTimestamp(reply, replyOperationTimeAt(at)), time);
  });

  it('is not found where the reply ends otherwise', () => {
    for (const doc of [{ n: 1, ok: 1 }, { ok: 1, operationTime: time, $clusterTime: clusterTimeMetadata(later) }, { $clusterTime: clusterTimeMetadata(later), operationTime: time, ok: 1 }]) {
      assert.equal(replyTimesAt(serializeDocument(doc)), -1, JSON.stringify(Object.keys(doc)));
    }
    assert.equal(replyTimesAt(Buffer.alloc(3)), -1);
  });

  it('is written as a serialized document ends', () => {
    const head = serializeDocument({ n: 1, ok: 1 });
    const out = Buffer.alloc(head.length - 1 + REPLY_TIMES_LENGTH);
    head.copy(out, 0, 0, head.length - 1);
    writeReplyTimes(out, head.length - 1, later, time);
    out.writeInt32LE(out.length, 0);
    assert.deepEqual(out, reply);
  });
});

describe('network gossip', () => {
  it("sends this process's time with a request and takes in a reply's", () => {
    let ms = 1_000_000_000_000;
    const clock = new LogicalClock(() => ms);
    const gossip = networkGossip(clock);
    const element = gossip.element();
    assert.equal(element.length, CLUSTER_TIME_ELEMENT_LENGTH);
    assert.deepEqual(readTimestamp(element, clusterTimeElementTimeAt(0)), clock.now());
    assert.equal(gossip.element(), element, 'the same bytes while the clock stands still');
    gossip.receive(serializeDocument({ ok: 1, $clusterTime: clusterTimeMetadata(new Timestamp({ t: 1_000_000_050, i: 3 })), operationTime: time }));
    assert.deepEqual(clock.now(), new Timestamp({ t: 1_000_000_050, i: 3 }));
    assert.deepEqual(readTimestamp(gossip.element(), clusterTimeElementTimeAt(0)), new Timestamp({ t: 1_000_000_050, i: 3 }));
    gossip.receive(serializeDocument({ ok: 1 }));
    ms += 1000;
    assert.throws(() => gossip.receive(serializeDocument({ ok: 1, $clusterTime: clusterTimeMetadata(new Timestamp({ t: 2_000_000_000, i: 1 })), operationTime: time })), /too far/);
  });
});
