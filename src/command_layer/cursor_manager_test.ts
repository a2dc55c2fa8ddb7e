import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { CappedInsertNotifier } from '../mongod_commands/capped_insert_notifier.js';
import { CursorManager, type Batch, type CursorDoc, type TailOptions } from './cursor_manager.js';
import type { KvWriter } from '../storage/op_observer.js';
import { MongoError } from '../base/errors.js';
import { systemClock } from '../base/clock.js';
import { checkForInterrupt, withDeadline } from '../base/operation_deadline.js';

// A source that, like a tailable scan, ends at what there is now and has more once more is pushed.
class Growing implements IterableIterator<CursorDoc> {
  private readonly docs: Doc[] = [];
  private at = 0;
  push(...docs: Doc[]): void {
    this.docs.push(...docs);
  }
  next(): IteratorResult<CursorDoc> {
    return this.at < this.docs.length ? { done: false, value: { doc: this.docs[this.at++]! } } : { done: true, value: undefined };
  }
  [Symbol.iterator](): this {
    return this;
  }
}

const NS = 't.cap';
const notifier = new CappedInsertNotifier(systemClock);
const inserted = (): void => notifier.onInsert({} as KvWriter, NS);

function tailOptions(awaitData: boolean, restore: () => void = () => undefined): TailOptions {
  return { keepOpen: true, awaitData, restore, waitForData: (ms, signal) => notifier.waitForInsert(NS, ms, signal) };
}

const ids = (batch: Batch) => batch.docs.map((d) => deserializeDocument(d.bytes)._id);

describe('tailable cursors', () => {
  it('stay open at the end of their data and return what comes later', async () => {
    const cursors = new CursorManager(systemClock);
    const source = new Growing();
    source.push({ _id: 1 });
    const first = cursors.firstBatch(NS, source, undefined, false, { tail: tailOptions(false) });
    assert.deepEqual(ids(first), [1]);
    assert.ok(!first.cursorId.isZero());
    const empty = await cursors.getMore(first.cursorId, NS, undefined);
    assert.deepEqual(ids(empty), []);
    assert.ok(empty.cursorId.equals(first.cursorId), 'an empty batch keeps the cursor');
    source.push({ _id: 2 });
    assert.deepEqual(ids(await cursors.getMore(first.cursorId, NS, undefined)), [2]);
  });

  it('close at once when told there is nothing to tail', () => {
    const cursors = new CursorManager(systemClock);
    const batch = cursors.firstBatch(NS, new Growing(), undefined, false, { tail: { ...tailOptions(false), keepOpen: false } });
    assert.ok(batch.cursorId.isZero());
    assert.equal(cursors.openCount, 0);
  });

  it('with awaitData, wait for an insert up to maxTimeMS, or answer what is there at once', async () => {
    const cursors = new CursorManager(systemClock);
    const source = new Growing();
    const id = cursors.firstBatch(NS, source, undefined, false, { tail: tailOptions(true) }).cursorId;
    let started = Date.now();
    assert.deepEqual(ids(await cursors.getMore(id, NS, undefined, 150)), []);
    assert.ok(Date.now() - started >= 140, 'waited for its maxTimeMS');
    started = Date.now();
    setTimeout(() => {
      source.push({ _id: 'late' });
      inserted();
    }, 50);
    assert.deepEqual(ids(await cursors.getMore(id, NS, undefined, 5000)), ['late']);
    assert.ok(Date.now() - started < 2000, 'woken by the insert');
    source.push({ _id: 'ready' });
    started = Date.now();
    assert.deepEqual(ids(await cursors.getMore(id, NS, undefined, 5000)), ['ready']);
    assert.ok(Date.now() - started < 100, 'documents already there are answered without waiting');
  });

  it('refuse a second getMore while one waits, and wake it with CursorKilled when killed', async () => {
    const cursors = new CursorManager(systemClock);
    const id = cursors.firstBatch(NS, new Growing(), undefined, false, { tail: tailOptions(true) }).cursorId;
    const waiting = cursors.getMore(id, NS, undefined, 10_000);
    assert.throws(() => cursors.getMore(id, NS, undefined), { code: 143 });
    assert.ok(cursors.kill(id));
    await assert.rejects(Promise.resolve(waiting), { code: 237 });
  });

  it('die when their source cannot go on', () => {
    const cursors = new CursorManager(systemClock);
    const lost = Object.assign(new Error('lost'), { code: 136 });
    const id = cursors.firstBatch(NS, new Growing(), undefined, false, { tail: tailOptions(false, () => { throw lost; }) }).cursorId;
    assert.throws(() => cursors.getMore(id, NS, undefined), lost);
    assert.throws(() => cursors.getMore(id, NS, undefined), { code: 43 });
  });
});

describe('change stream cursors', () => {
  it('carry the tail\'s postBatchResumeToken on every batch, given the last document and whether one was read past it', async () => {
    const cursors = new CursorManager(systemClock);
    const source = new Growing();
    const asked: [unknown, boolean][] = [];
    const tail: TailOptions = { ...tailOptions(true), postBatchResumeToken: (last, pending) => {
      asked.push([last?._id, pending]);
      return { _data: String(asked.length) };
    } };
    const first = cursors.firstBatch(NS, source, undefined, false, { tail });
    assert.deepEqual(first.postBatchResumeToken, { _data: '1' });
    assert.ok(cursors.isChangeStream(first.cursorId));
    source.push({ _id: 'a' }, { _id: 'b' });
    const next = await cursors.getMore(first.cursorId, NS, 1);
    assert.deepEqual([ids(next), next.postBatchResumeToken], [['a'], { _data: '2' }]);
    const waited = await cursors.getMore(first.cursorId, NS, undefined, 50);
    assert.deepEqual([ids(waited), waited.postBatchResumeToken], [['b'], { _data: '3' }]);
    const empty = await cursors.getMore(first.cursorId, NS, undefined, 50);
    assert.deepEqual([ids(empty), empty.postBatchResumeToken], [[], { _data: '4' }]);
    assert.deepEqual(asked, [[undefined, false], ['a', false], ['b', false], [undefined, false]]);
    const plain = cursors.firstBatch(NS, new Growing(), undefined, false, { tail: tailOptions(true) });
    assert.equal(plain.postBatchResumeToken, undefined);
    assert.equal(cursors.isChangeStream(plain.cursorId), false);
  });

  it('close with the batch in which their source ended', async () => {
    const cursors = new CursorManager(systemClock);
    const source = new Growing();
    let ended = false;
    const tail: TailOptions = { ...tailOptions(true), ended: () => ended };
    const id = cursors.firstBatch(NS, source, undefined, false, { tail }).cursorId;
    source.push({ _id: 'invalidate' });
    ended = true;
    const last = await cursors.getMore(id, NS, undefined, 50);
    assert.deepEqual(ids(last), ['invalidate']);
    assert.ok(last.cursorId.isZero());
    assert.equal(cursors.openCount, 0);
    assert.ok(cursors.firstBatch(NS, new Growing(), undefined, false, { tail }).cursorId.isZero(), 'one that has ended already is not kept');
  });
});

describe('getMore options', () => {
  it('maxTimeMS is refused on a cursor that does not await data', () => {
    const cursors = new CursorManager(systemClock);
    const plain = cursors.firstBatch(NS, [{ doc: { _id: 1 } }, { doc: { _id: 2 } }], 1).cursorId;
    assert.throws(() => cursors.getMore(plain, NS, undefined, 10), { code: 2, message: 'cannot set maxTimeMS on getMore command for a non-awaitData cursor' });
    const tailable = cursors.firstBatch(NS, new Growing(), undefined, false, { tail: tailOptions(false) }).cursorId;
    assert.throws(() => cursors.getMore(tailable, NS, undefined, 10), { code: 2 });
  });

  it('noCursorTimeout keeps an idle cursor', () => {
    const cursors = new CursorManager(systemClock);
    const docs = [{ doc: { _id: 1 } }, { doc: { _id: 2 } }];
    const kept = cursors.firstBatch(NS, docs, 1, false, { noCursorTimeout: true }).cursorId;
    const idle = cursors.firstBatch(NS, docs, 1).cursorId;
    assert.equal(cursors.killIdle(1000, Date.now() + 60_000), 1);
    assert.throws(() => cursors.getMore(idle, NS, undefined), { code: 43 });
    assert.deepEqual(ids(cursors.getMore(kept, NS, undefined) as Batch), [2]);
  });
});

describe('a cursor opened under maxTimeMS', () => {
  // Documents that take `costMs` each to produce, checking for interrupt as plan execution does.
  function* slow(n: number, costMs: number): Iterable<CursorDoc> {
    for (let i = 0; i < n; i++) {
      const until = performance.now() + costMs;
      while (performance.now() < until) checkForInterrupt();
      yield { doc: { _id: i } };
    }
  }

  it('spends what is left of its time over its getMores, and is killed when none is left', () => {
    const cursors = new CursorManager(systemClock);
    // 20 ms a document against 400 ms: four documents leave time on a loaded machine, a hundred do not.
    const first = withDeadline(performance.now() + 400, () => cursors.firstBatch(NS, slow(100, 20), 2));
    assert.deepEqual(ids(first), [0, 1]);
    assert.deepEqual(ids(cursors.getMore(first.cursorId, NS, 2) as Batch), [2, 3], 'time is left after two documents');
    assert.throws(() => cursors.getMore(first.cursorId, NS, 100), (e: unknown) => e instanceof MongoError && e.code === 50);
    assert.throws(() => cursors.getMore(first.cursorId, NS, 2), (e: unknown) => e instanceof MongoError && e.code === 43, 'the cursor is gone');
  });

  it('without maxTimeMS runs to the end', () => {
    const cursors = new CursorManager(systemClock);
    const first = cursors.firstBatch(NS, slow(30, 2), 1);
    const rest = cursors.getMore(first.cursorId, NS, 100) as Batch;
    assert.equal(rest.docs.length, 29);
    assert.ok(rest.cursorId.isZero());
  });
});
