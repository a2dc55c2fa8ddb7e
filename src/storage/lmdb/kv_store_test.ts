import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KvStore } from './kv_store.js';

const b = (...bytes: number[]) => Buffer.from(bytes);
const NONE = Buffer.alloc(0);

async function withStore(fn: (open: () => KvStore) => Promise<void> | void): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-kv-'));
  const opened: KvStore[] = [];
  try {
    await fn(() => {
      const store = KvStore.open(dir);
      opened.push(store);
      return store;
    });
  } finally {
    for (const store of opened) await store.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

const keys = (store: KvStore, space: string) => [...store.space(space).range(NONE, NONE)].map((e) => [...e.key]);

describe('KvStore spaces', () => {
  it('keeps a suspended range iterator working when a write unit opens a new space', () => withStore((open) => {
    const kv = open();
    kv.writeSync((w) => { for (let i = 0; i < 100; i++) w.space('a').put(b(i), b(i)); });
    const cursor = kv.space('a').range(NONE, NONE)[Symbol.iterator]();
    assert.deepEqual([...cursor.next().value!.key], [0]);
    // A getMore after a write that created a collection: lmdb-js's openDB inside the write
    // transaction used to commit the read transaction the cursor was reading through.
    kv.writeSync((w) => w.space('new').put(b(1), b(1)));
    let n = 1;
    while (!cursor.next().done) n++;
    assert.equal(n, 100);
  }));

  it('appends only keys above every key of the space, whatever the other spaces hold', () => withStore((open) => {
    const kv = open();
    const results = kv.writeSync((w) => {
      w.put(b(9), b(0));
      const s = w.space('s');
      return [s.append(b(1), b(1)), s.append(b(2), b(2)), s.append(b(2), b(3)), s.append(b(0), b(4)), s.append(b(3, 0), b(5))];
    });
    assert.deepEqual(results, [true, true, false, false, true]);
    assert.deepEqual(keys(kv, 's'), [[1], [2], [3, 0]]);
    assert.deepEqual([...kv.space('s').get(b(2))!], [2]);
  }));

  it('ranges over a space with open ends, both ways', () => withStore((open) => {
    const kv = open();
    kv.writeSync((w) => { for (const k of [1, 2, 3, 4]) w.space('s').put(b(k), b(k)); });
    const range = (start: Buffer, end: Buffer, reverse = false) => [...kv.space('s').range(start, end, { reverse })].map((e) => e.key[0]);
    assert.deepEqual(range(NONE, NONE), [1, 2, 3, 4]);
    assert.deepEqual(range(NONE, NONE, true), [4, 3, 2, 1]);
    assert.deepEqual(range(b(2), b(4)), [2, 3]);
    assert.deepEqual(range(b(2), b(4), true), [3, 2]);
    assert.deepEqual(range(b(2), NONE, true), [4, 3, 2]);
  }));

  it('can use a space after the unit that created it aborted', () => withStore((open) => {
    const kv = open();
    assert.throws(() => kv.writeSync((w) => { w.space('s').put(b(1), b(1)); throw new Error('abort'); }), /abort/);
    assert.equal(kv.space('s').get(b(1)), undefined);
    kv.writeSync((w) => w.space('s').put(b(2), b(2)));
    assert.deepEqual(keys(kv, 's'), [[2]]);
  }));

  it('keeps a space whose drop aborted, and forgets one whose drop committed, across a reopening', async () => withStore(async (open) => {
    const kv = open();
    kv.writeSync((w) => { w.space('kept').put(b(1), b(1)); w.space('gone').put(b(1), b(1)); });
    assert.throws(() => kv.writeSync((w) => { w.dropSpace('kept'); throw new Error('abort'); }), /abort/);
    kv.writeSync((w) => w.dropSpace('gone'));
    assert.deepEqual(keys(kv, 'kept'), [[1]]);
    assert.deepEqual(keys(kv, 'gone'), []);
    await kv.close();
    const again = open();
    assert.deepEqual(keys(again, 'kept'), [[1]]);
    assert.deepEqual(keys(again, 'gone'), []);
  }));

  it('reads a space first opened while a shared read transaction is held', async () => withStore(async (open) => {
    const kv = open();
    kv.writeSync((w) => { w.put(b(1), b(1)); w.space('s').put(b(1), b(7)); });
    await kv.close();
    const again = open();
    assert.deepEqual([...again.get(b(1))!], [1]);
    assert.deepEqual([...again.space('s').get(b(1))!], [7]);
  }));
});
