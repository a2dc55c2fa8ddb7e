import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ManualClock } from '../base/manual_clock_test_util.js';
import type { Doc } from '../bson/values.js';
import { minOpTime, type OpTime } from '../repl/op_time.js';
import { electedPrimary, entry, started, THREE } from '../repl/topology_test_util.js';
import { lastAppliedOpTime, type TopologyState } from '../repl/topology_state.js';
import { topologyStep } from '../repl/topology_coordinator.js';
import { bsonTimestamp } from './op_time_bson.js';
import { ReplicationWaiters, type ReplicationProgress } from './replication_waiters.js';

// Real core states (the pure PV1 core's), moved by hand where a test needs a member to have
// reached a point: what the coordinator hands the waiters.
class CoreStates implements ReplicationProgress {
  private readonly listeners: (() => void)[] = [];
  // The last entry the store holds when a fetched batch is still being applied; undefined: all.
  stored: OpTime | undefined;
  constructor(public current: TopologyState) {}
  state(): TopologyState {
    return this.current;
  }
  storedOpTime(): OpTime {
    return this.stored ?? lastAppliedOpTime(this.current);
  }
  readableCommitPoint(): OpTime {
    const stored = this.storedOpTime();
    return minOpTime(this.current.lastCommittedOpTime, stored);
  }
  isWritablePrimary(): boolean {
    return this.current.role === 'leader' && this.current.leader?.writable === true;
  }
  onProgress(listener: () => void): void {
    this.listeners.push(listener);
  }
  writeNoop(o: Doc): OpTime | undefined {
    if (!this.isWritablePrimary()) return undefined;
    this.current = topologyStep(this.current, { type: 'clientWrite', nowMs: this.current.nowMs, o }).state;
    return { ts: this.current.oplog.at(-1)!.ts, t: this.current.oplog.at(-1)!.t };
  }
  move(next: TopologyState): void {
    this.current = next;
    for (const l of this.listeners) l();
  }
}

function withSecondaryAt(s: TopologyState, member: number, at: OpTime): TopologyState {
  return { ...s, members: s.members.map((m, i) => (i === member ? { ...m, appliedOpTime: at, durableOpTime: at } : m)) };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('write concern waits', () => {
  const primary = electedPrimary();
  const written = lastAppliedOpTime(primary);
  const lastOp = { ts: bsonTimestamp(written.ts), term: written.t };
  const insert = (writeConcern?: Doc, extra: Doc = {}): Doc => ({ insert: 'c', documents: [{}], ...(writeConcern === undefined ? {} : { writeConcern }), ...extra });

  it('is a writable primary to start from', () => {
    assert.equal(primary.role, 'leader');
    assert.equal(primary.leader?.writable, true);
  });

  it('answers once enough members hold the write, and not before', async () => {
    const states = new CoreStates(primary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    let answered: Doc | undefined;
    void Promise.resolve(waiters.afterCommand('insert', insert({ w: 2 }), { ok: 1, n: 1 }, lastOp)).then((r) => { answered = r; });
    await settle();
    assert.equal(answered, undefined);
    states.move(withSecondaryAt(primary, 2, written));
    await settle();
    assert.deepEqual(answered, { ok: 1, n: 1 });
  });

  it('waits for the commit point under the implicit default w: majority, and w: 1 not at all', async () => {
    const states = new CoreStates(primary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    assert.deepEqual(waiters.afterCommand('insert', insert({ w: 1 }), { ok: 1, n: 1 }, lastOp), { ok: 1, n: 1 });
    let answered: Doc | undefined;
    void Promise.resolve(waiters.afterCommand('insert', insert(), { ok: 1, n: 1 }, lastOp)).then((r) => { answered = r; });
    states.move(withSecondaryAt(primary, 1, written));
    await settle();
    assert.equal(answered, undefined, 'positions alone are not the commit point');
    states.move({ ...states.current, lastCommittedOpTime: written });
    await settle();
    assert.deepEqual(answered, { ok: 1, n: 1 });
  });

  it("waits for majority before a participant's vote to prepare, as for a commit, though no other statement of a transaction waits", async () => {
    const states = new CoreStates(primary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    let answered: Doc | undefined;
    const prepare = { prepareTransaction: 1, lsid: {}, txnNumber: 1, autocommit: false };
    void Promise.resolve(waiters.afterCommand('prepareTransaction', prepare, { ok: 1, prepareTimestamp: 1 }, lastOp)).then((r) => { answered = r; });
    await settle();
    assert.equal(answered, undefined);
    states.move({ ...states.current, lastCommittedOpTime: written });
    await settle();
    assert.deepEqual(answered, { ok: 1, prepareTimestamp: 1 });
  });

  it('answers a config server catalog command once its writes are majority-committed, whatever write concern it carries', async () => {
    const states = new CoreStates(primary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    let answered: Doc | undefined;
    const cmd = { _configsvrCreateDatabase: 'db', writeConcern: { w: 1 } };
    void Promise.resolve(waiters.afterCommand('_configsvrCreateDatabase', cmd, { ok: 1 }, lastOp)).then((r) => { answered = r; });
    states.move(withSecondaryAt(primary, 1, written));
    await settle();
    assert.equal(answered, undefined);
    states.move({ ...states.current, lastCommittedOpTime: written });
    await settle();
    assert.deepEqual(answered, { ok: 1 });
  });

  it('waits for a catalog write the coordinator takes in after the command answered, when no lastOp recorded it', async () => {
    const committed = { ...primary, lastCommittedOpTime: written };
    const states = new CoreStates(committed);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    let answered: Doc | undefined;
    void Promise.resolve(waiters.afterCommand('_configsvrCreateDatabase', { _configsvrCreateDatabase: 'db' }, { ok: 1 }, { ts: undefined, term: undefined })).then((r) => { answered = r; });
    // The write made after the command's awaits, taken in on the coordinator's next turn.
    const later = entry(written.ts + 1, written.t);
    states.move({ ...committed, oplog: [...committed.oplog, later] });
    await settle();
    await settle();
    assert.equal(answered, undefined, 'the write is not majority-committed yet');
    states.move({ ...states.current, lastCommittedOpTime: { ts: later.ts, t: later.t } });
    await settle();
    assert.deepEqual(answered, { ok: 1 });
  });

  it('gives up after wtimeout with WriteConcernFailed and the write concern in errInfo', async () => {
    const clock = new ManualClock();
    const waiters = new ReplicationWaiters(new CoreStates(primary), clock);
    const pending = waiters.afterCommand('insert', insert({ w: 3, wtimeout: 500 }), { ok: 1, n: 1 }, lastOp);
    clock.advance(500);
    assert.deepEqual(await pending, {
      ok: 1, n: 1,
      writeConcernError: { code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out', errInfo: { wtimeout: true, writeConcern: { w: 3, wtimeout: 500, provenance: 'clientSupplied' } } },
    });
  });

  it('ends with PrimarySteppedDown when the primary steps down, labelled for a retryable write', async () => {
    const states = new CoreStates(primary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    const pending = waiters.afterCommand('insert', insert({ w: 'majority' }, { lsid: { id: 1 }, txnNumber: Long.fromNumber(1) }), { ok: 1, n: 1 }, lastOp);
    states.move({ ...primary, role: 'follower', memberState: 'SECONDARY', leader: null });
    const reply = await pending;
    assert.equal((reply.writeConcernError as Doc).code, 189);
    assert.deepEqual(reply.errorLabels, ['RetryableWriteError']);
  });

  it('answers at once what the config can never satisfy, and refuses a bad write concern before running', () => {
    const waiters = new ReplicationWaiters(new CoreStates(primary), new ManualClock());
    assert.equal(((waiters.afterCommand('insert', insert({ w: 4 }), { ok: 1, n: 1 }, lastOp) as Doc).writeConcernError as Doc).code, 100);
    assert.equal(((waiters.afterCommand('insert', insert({ w: 'dc' }), { ok: 1, n: 1 }, lastOp) as Doc).writeConcernError as Doc).code, 79);
    assert.throws(() => waiters.checkWriteConcern('insert', insert({ w: -1 })), (e: MongoError) => e.code === 9);
    assert.deepEqual(waiters.afterCommand('find', { find: 'c', writeConcern: { w: 3 } }, { ok: 1 }, lastOp), { ok: 1 }, 'a read waits for no write concern');
    assert.deepEqual(waiters.afterCommand('insert', { insert: 'c', writeConcern: { w: 3 }, autocommit: false }, { ok: 1 }, lastOp), { ok: 1 }, 'nor does a transaction statement');
  });
});

describe('read concern waits', () => {
  it('a majority read reads at the commit point, and is refused until there is one', () => {
    const member = started(THREE, 1);
    const waiters = new ReplicationWaiters(new CoreStates({ ...member, lastCommittedOpTime: { ts: 0, t: -1 } }), new ManualClock());
    const none = waiters.beforeRead('find', { find: 'c', readConcern: { level: 'majority' } });
    assert.throws(() => none!.readAt!(), (e: MongoError) => e.code === 134);
    const committed = new ReplicationWaiters(new CoreStates({ ...member, oplog: [...member.oplog, { ts: 1_700_000_000_000_007, t: 1, op: 'n', o: {} }], lastCommittedOpTime: { ts: 1_700_000_000_000_007, t: 1 } }), new ManualClock());
    assert.deepEqual(committed.beforeRead('find', { find: 'c', readConcern: { level: 'majority' } })!.readAt!(), new Timestamp({ t: 1_700_000_000, i: 7 }));
    assert.equal(committed.beforeRead('find', { find: 'c' }), undefined, 'a local read without afterClusterTime waits for nothing');
  });

  it('a new primary serves a majority read only once an entry of its own term is committed', async () => {
    const primary = electedPrimary();
    const first = primary.leader!.firstOpTimeOfMyTerm!;
    assert.ok(primary.lastCommittedOpTime.t < first.t, 'its no-op is not committed yet');
    const states = new CoreStates(primary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    const read = waiters.beforeRead('find', { find: 'c', readConcern: { level: 'majority' } });
    let done = false;
    void read!.wait!.then(() => { done = true; });
    await settle();
    assert.equal(done, false);
    states.move({ ...primary, lastCommittedOpTime: first });
    await settle();
    assert.equal(done, true);
    assert.deepEqual(read!.readAt!(), bsonTimestamp(first.ts));
  });

  it('a snapshot read waits for the commit point to reach its time; a primary whose oplog ends before it writes a no-op', async () => {
    const primary = electedPrimary();
    const states = new CoreStates({ ...primary, lastCommittedOpTime: primary.leader!.firstOpTimeOfMyTerm! });
    const waiters = new ReplicationWaiters(states, new ManualClock());
    const last = lastAppliedOpTime(states.current);
    assert.equal(waiters.beforeSnapshotRead(bsonTimestamp(last.ts)), undefined, 'its time is committed already');

    const ahead = bsonTimestamp(last.ts + 1);
    const wait = waiters.beforeSnapshotRead(ahead);
    const noop = states.current.oplog.at(-1)!;
    assert.deepEqual(noop.o, { msg: 'snapshot read' });
    let done = false;
    void wait!.then(() => { done = true; });
    await settle();
    assert.equal(done, false, 'not before a majority holds what the primary wrote up to the time read at');
    states.move({ ...states.current, lastCommittedOpTime: { ts: noop.ts, t: noop.t } });
    await settle();
    assert.equal(done, true);
  });

  it('a secondary serves an afterClusterTime read once it has applied that far', async () => {
    const secondary = started(THREE, 1);
    const states = new CoreStates(secondary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    const target = { ts: lastAppliedOpTime(secondary).ts + 10, t: 0 };
    const read = waiters.beforeRead('find', { find: 'c', readConcern: { afterClusterTime: bsonTimestamp(target.ts) } });
    let done = false;
    void read!.wait!.then(() => { done = true; });
    await settle();
    assert.equal(done, false);
    states.move({ ...secondary, oplog: [...secondary.oplog, { ts: target.ts, t: 0, op: 'i', o: {} }] });
    await settle();
    assert.equal(done, true);
  });

  it('a secondary whose store has not taken a fetched batch yet reads as far as its store holds, and a causal read waits for the store', async () => {
    const base = started(THREE, 1);
    const held = lastAppliedOpTime(base);
    const fetched = { ts: held.ts + 10, t: held.t };
    // The core took the batch (and learned a commit point at its end); the store holds it not yet.
    const secondary = { ...base, oplog: [...base.oplog, { ...fetched, op: 'i' as const, o: {} }], lastCommittedOpTime: fetched };
    const states = new CoreStates(secondary);
    states.stored = held;
    const waiters = new ReplicationWaiters(states, new ManualClock());
    assert.deepEqual(waiters.beforeRead('find', { find: 'c', readConcern: { level: 'majority' } })!.readAt!(), bsonTimestamp(held.ts), 'not at the commit point the store does not reach');
    const read = waiters.beforeRead('find', { find: 'c', readConcern: { afterClusterTime: bsonTimestamp(fetched.ts) } });
    let done = false;
    void read!.wait!.then(() => { done = true; });
    await settle();
    assert.equal(done, false, 'the fetched write is not readable yet');
    states.stored = undefined;
    states.move(secondary);
    await settle();
    assert.equal(done, true);
    assert.deepEqual(waiters.beforeRead('find', { find: 'c', readConcern: { level: 'majority' } })!.readAt!(), bsonTimestamp(fetched.ts));
  });

  it('a linearizable read: refused off a primary; on one, answered only once a majority holds a no-op written after it', async () => {
    const linearizable = (maxTimeMS?: number): Doc => ({ find: 'c', readConcern: { level: 'linearizable' }, ...(maxTimeMS === undefined ? {} : { maxTimeMS }) });
    const off = new ReplicationWaiters(new CoreStates(started(THREE, 1)), new ManualClock());
    assert.throws(() => off.beforeRead('find', linearizable()), (e: MongoError) => e.code === 10107 && e.message === 'cannot satisfy linearizable read concern on non-primary node');

    const primary = electedPrimary();
    const states = new CoreStates(primary);
    const waiters = new ReplicationWaiters(states, new ManualClock());
    const cmd = linearizable();
    assert.equal(waiters.beforeRead('find', cmd), undefined, 'the read itself waits for nothing');
    const pending = waiters.afterCommand('find', cmd, { ok: 1, cursor: {} }, { ts: undefined, term: undefined }) as Promise<Doc>;
    const noop = states.current.oplog.at(-1)!;
    assert.deepEqual(noop.o, { msg: 'linearizable read' });
    let answered: Doc | undefined;
    void pending.then((r) => { answered = r; });
    await settle();
    assert.equal(answered, undefined, 'not before a majority holds the no-op');
    states.move({ ...states.current, lastCommittedOpTime: { ts: noop.ts, t: noop.t } });
    await settle();
    assert.deepEqual(answered, { ok: 1, cursor: {} });
  });

  it('a linearizable read on a primary that cannot reach a majority fails at its maxTimeMS, or when it learns it was deposed', async () => {
    const clock = new ManualClock();
    const states = new CoreStates(electedPrimary());
    const waiters = new ReplicationWaiters(states, clock);
    const timed = { find: 'c', readConcern: { level: 'linearizable' }, maxTimeMS: 500 };
    waiters.beforeRead('find', timed);
    const pending = waiters.afterCommand('find', timed, { ok: 1 }, { ts: undefined, term: undefined }) as Promise<Doc>;
    clock.advance(600);
    assert.equal((await pending).code, 50);
    const untimed = { find: 'c', readConcern: { level: 'linearizable' } };
    waiters.beforeRead('find', untimed);
    const deposed = waiters.afterCommand('find', untimed, { ok: 1 }, { ts: undefined, term: undefined }) as Promise<Doc>;
    states.move({ ...states.current, role: 'follower', memberState: 'SECONDARY', leader: null, term: states.current.term + 1 });
    assert.equal((await deposed).code, 189);
  });
});
