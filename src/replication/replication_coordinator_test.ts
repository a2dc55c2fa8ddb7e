import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Long, Timestamp } from 'bson';
import pino from 'pino';
import { ManualClock } from '../base/manual_clock_test_util.js';
import { FailPoints } from '../base/fail_points.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { LogicalClock } from '../sessions/logical_clock.js';
import { StorageEngine } from '../storage/storage_engine.js';
import type { Network } from '../wire/network.js';
import { enableOplog } from '../oplog/replicated_oplog.js';
import { ReplicationCoordinator } from './replication_coordinator.js';
import { CONFIG_NS, ELECTION_NS, localReplStore } from './repl_store.js';

// After the times the test's own local writes take (the config's), as a set's first entry is.
const SET_FIRST_TS = new Timestamp({ t: 1_700_000_000, i: 100 });

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const CONFIG: Doc = {
  _id: 'rs0', version: 1, term: 0,
  members: [0, 1, 2].map((i) => ({ _id: i, host: `m${i}:27017`, priority: 1, votes: 1, arbiterOnly: false, hidden: false })),
  settings: { electionTimeoutMillis: 1000, heartbeatIntervalMillis: 500 },
};

// The network port as the members answer: each other member is a SECONDARY at the set's first
// entry and grants every vote. Each request is recorded with the vote local.replset.election held
// on disk when it left.
function membersNetwork(readVoteOnDisk: () => Doc | undefined, down?: string): { network: Network; sent: { cmd: Doc; voteOnDisk: Doc | undefined }[] } {
  const sent: { cmd: Doc; voteOnDisk: Doc | undefined }[] = [];
  const network = {
    async command(host: string, _db: string, cmd: Doc): Promise<Doc> {
      sent.push({ cmd, voteOnDisk: readVoteOnDisk() });
      if (host === down) throw new MongoError(ErrorCodes.HostUnreachable, `Connection refused: ${host}`);
      if (cmd.checkEmpty === true) return { ok: 1 };
      if ('replSetHeartbeat' in cmd) {
        const opTime = { ts: SET_FIRST_TS, t: Long.fromNumber(-1) };
        return { ok: 1, set: 'rs0', state: 2, term: Long.fromNumber(0), configVersion: 1, opTime, durableOpTime: opTime, syncingTo: '', $replData: { lastOpCommitted: { ts: new Timestamp({ t: 0, i: 0 }), t: Long.fromNumber(-1) } } };
      }
      if ('replSetRequestVotes' in cmd) return { ok: 1, term: cmd.term, voteGranted: true, reason: '' };
      return { ok: 1 };
    },
    commandRaw: () => Promise.reject(new Error('not used')),
    forwardMessage: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
  } satisfies Network;
  return { network, sent };
}

async function withMember(fn: (m: { coordinator: ReplicationCoordinator; clock: ManualClock; sent: { cmd: Doc; voteOnDisk: Doc | undefined }[]; local: LocalCollections; storage: StorageEngine }) => Promise<void>, options: { initiated?: boolean; down?: string; network?: Network; logs?: string[]; ownEntry?: Timestamp; restarted?: boolean; failPoints?: FailPoints } = {}): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-replcoord-'));
  const clock = new ManualClock();
  const clusterTime = new LogicalClock(() => clock.now());
  let storage = StorageEngine.open(dir, { compilePartialFilter: () => () => true, clock: clusterTime });
  let local = new LocalCollections(storage);
  let store = localReplStore(local);
  if (options.initiated !== false) {
    store.writeConfig(CONFIG);
    // The set's first entry, as the other members hold it: this member restarts on its files.
    const oplog = enableOplog(storage, { term: () => -1, checkCanWrite: () => undefined, clock: clusterTime });
    oplog.appendNoop({ msg: 'initiating set' }, SET_FIRST_TS, -1);
    if (options.ownEntry !== undefined) {
      storage.write((unit) => unit.insert(storage.ensureCollection('app.c').coll, { _id: 1 }));
      oplog.appendNoop({ msg: 'only this member has it' }, options.ownEntry, 0);
    }
    oplog.disable();
    if (options.restarted === true) {
      // What the process wrote is on disk; its version history is not.
      await storage.close();
      storage = StorageEngine.open(dir, { compilePartialFilter: () => () => true, clock: clusterTime });
      local = new LocalCollections(storage);
      store = localReplStore(local);
    }
  }
  const members = membersNetwork(() => local.findOne(ELECTION_NS), options.down);
  const { sent } = members;
  const logs = options.logs;
  const logger = logs === undefined ? pino({ level: 'silent' }) : pino({ level: 'warn' }, { write: (line: string) => void logs.push(line) });
  const coordinator = new ReplicationCoordinator({
    setName: 'rs0', store, network: options.network ?? members.network, clock, clusterTime, isSelf: (h) => h === 'm0:27017', logger, seed: 7, storage, dbpath: dir, local,
    ...(options.failPoints === undefined ? {} : { failPoints: options.failPoints }),
  });
  try {
    coordinator.start();
    await fn({ coordinator, clock, sent, local, storage });
  } finally {
    coordinator.stop();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(clock: ManualClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 50) {
    clock.advance(50);
    await settle();
  }
}

// Member m1 is the PRIMARY of term 1, ahead of us, refusing votes; its oplog after our first entry
// holds an entry without its document.
function malformedSourceNetwork(diverged = false): Network {
  const ahead = { ts: new Timestamp({ t: 1_700_000_005, i: 1 }), t: Long.fromNumber(1) };
  const reply = async (host: string, _db: string, cmd: Doc): Promise<Doc> => {
    if ('replSetHeartbeat' in cmd) {
      const primary = host === 'm1:27017';
      const opTime = primary ? ahead : { ts: SET_FIRST_TS, t: Long.fromNumber(-1) };
      return { ok: 1, set: 'rs0', state: primary ? 1 : 2, term: Long.fromNumber(1), configVersion: 1, opTime, durableOpTime: opTime, syncingTo: '', $replData: { lastOpCommitted: { ts: new Timestamp({ t: 0, i: 0 }), t: Long.fromNumber(-1) } } };
    }
    if ('replSetRequestVotes' in cmd) return { ok: 1, term: Long.fromNumber(1), voteGranted: false, reason: 'no' };
    if (cmd.find === 'oplog.rs') {
      const first = { op: 'n', ns: '', o: { msg: 'initiating set' }, ts: SET_FIRST_TS, t: Long.fromNumber(-1), v: Long.fromNumber(2), wall: new Date() };
      const next = diverged
        ? { op: 'n', ns: '', o: { msg: 'new primary' }, ts: ahead.ts, t: ahead.t, v: Long.fromNumber(2), wall: new Date() }
        : { op: 'i', ns: 'app.c', ts: ahead.ts, t: ahead.t, v: Long.fromNumber(2), wall: new Date() };
      const meta = { $replData: { term: Long.fromNumber(1), lastOpCommitted: { ts: new Timestamp({ t: 0, i: 0 }), t: Long.fromNumber(-1) } }, $oplogQueryData: { lastOpApplied: ahead } };
      // From a ts, or the oldest entry (asked when the source lacks the entry the fetch began at).
      const from = ((cmd.filter as Doc).ts as Doc | undefined)?.$gte as Timestamp | undefined;
      const batch = [first, next].filter((e) => from === undefined || e.ts.greaterThanOrEqual(from)).slice(0, Number(cmd.limit ?? 2));
      return { ok: 1, cursor: { id: Long.fromNumber(cmd.singleBatch === true ? 0 : 42), ns: 'local.oplog.rs', firstBatch: batch }, ...meta };
    }
    return { ok: 1 };
  };
  // As the wire delivers it: the reply's BSON decoded.
  const command = async (host: string, db: string, cmd: Doc): Promise<Doc> => deserializeDocument(serializeDocument(await reply(host, db, cmd)));
  return { command, commandRaw: () => Promise.reject(new Error('not used')), forwardMessage: () => Promise.reject(new Error('not used')), close: () => Promise.resolve() };
}

// No primary: the others are SECONDARY at the set's first entry and grant every vote, until a vote
// was asked; then m1 says it holds one entry more (what the new primary catches up to), and serves it.
function catchUpNetwork(): Network {
  const ahead = { ts: new Timestamp({ t: 1_700_000_005, i: 1 }), t: Long.fromNumber(-1) };
  let voted = false;
  const reply = async (host: string, _db: string, cmd: Doc): Promise<Doc> => {
    if ('replSetRequestVotes' in cmd) {
      voted = true;
      return { ok: 1, term: cmd.term, voteGranted: true, reason: '' };
    }
    if ('replSetHeartbeat' in cmd) {
      const opTime = voted && host === 'm1:27017' ? ahead : { ts: SET_FIRST_TS, t: Long.fromNumber(-1) };
      return { ok: 1, set: 'rs0', state: 2, term: Long.fromNumber(0), configVersion: 1, opTime, durableOpTime: opTime, syncingTo: '', $replData: { lastOpCommitted: { ts: new Timestamp({ t: 0, i: 0 }), t: Long.fromNumber(-1) } } };
    }
    if (cmd.find === 'oplog.rs') {
      const first = { op: 'n', ns: '', o: { msg: 'initiating set' }, ts: SET_FIRST_TS, t: Long.fromNumber(-1), v: Long.fromNumber(2), wall: new Date() };
      const next = { op: 'n', ns: '', o: { msg: 'from m1' }, ts: ahead.ts, t: ahead.t, v: Long.fromNumber(2), wall: new Date() };
      const meta = { $replData: { term: Long.fromNumber(1), lastOpCommitted: { ts: new Timestamp({ t: 0, i: 0 }), t: Long.fromNumber(-1) } }, $oplogQueryData: { lastOpApplied: ahead } };
      return { ok: 1, cursor: { id: Long.fromNumber(0), ns: 'local.oplog.rs', firstBatch: [first, next] }, ...meta };
    }
    return { ok: 1 };
  };
  const command = async (host: string, db: string, cmd: Doc): Promise<Doc> => deserializeDocument(serializeDocument(await reply(host, db, cmd)));
  return { command, commandRaw: () => Promise.reject(new Error('not used')), forwardMessage: () => Promise.reject(new Error('not used')), close: () => Promise.resolve() };
}

describe('ReplicationCoordinator', () => {
  it('a member whose last entry its source lacks rolls back to the common point: its entry undone, the rollback id raised', async () => {
    const logs: string[] = [];
    await withMember(async ({ coordinator, clock, storage }) => {
      assert.equal(coordinator.rollbackId(), 1);
      await run(clock, 3000);
      assert.ok(logs.some((l) => /Rollback finished/.test(l)), logs.join('\n'));
      const oplog = storage.getCollection('local.oplog.rs')!;
      const held = [...storage.scanRecords(oplog)].map((r) => String((deserializeDocument(r.bytes).o as Doc).msg));
      assert.equal(held[0], 'initiating set');
      assert.ok(!held.includes('only this member has it'), `its own entry is gone: ${held.join(', ')}`);
      assert.equal(coordinator.rollbackId(), 2);
      assert.equal(coordinator.canServeReads(), true);
    }, { network: malformedSourceNetwork(true), logs, ownEntry: new Timestamp({ t: 1_700_000_005, i: 1 }) });
  });

  it('a member restarted with an entry its source lacks cannot roll back by its history: it drops its data and syncs again', async () => {
    const logs: string[] = [];
    await withMember(async ({ coordinator, clock, storage }) => {
      assert.equal(coordinator.rollbackId(), 1);
      await run(clock, 3000);
      assert.ok(logs.some((l) => /drops its data and syncs again/.test(l)), logs.join('\n'));
      assert.equal(storage.getCollection('app.c'), undefined, 'its data is gone');
      const oplog = storage.getCollection('local.oplog.rs')!;
      assert.ok(![...storage.scanRecords(oplog)].some((r) => (deserializeDocument(r.bytes).o as Doc).msg === 'only this member has it'));
      assert.equal(coordinator.rollbackId(), 2);
      assert.equal(coordinator.state()!.memberState, 'STARTUP2');
    }, { network: malformedSourceNetwork(true), logs, ownEntry: new Timestamp({ t: 1_700_000_005, i: 1 }), restarted: true });
  });

  it('a sync source that sends a malformed entry is left and denylisted with an error logged, and nothing of its batch is applied', async () => {
    const logs: string[] = [];
    await withMember(async ({ coordinator, clock, storage }) => {
      await run(clock, 3000);
      const core = coordinator.state()!;
      assert.equal(core.memberState, 'SECONDARY');
      assert.ok(core.fetch.denylist[1] !== undefined, 'm1 is denylisted');
      assert.ok(logs.some((l) => /malformed oplog entry/.test(l)), logs.join('\n'));
      assert.equal(storage.getCollection('app.c'), undefined);
      assert.equal(core.oplog.length, 1);
    }, { network: malformedSourceNetwork(), logs });
  });

  it('a new primary whose catch-up batch is still going into its store takes writes only once it is in, and writes its no-op after it', async () => {
    const failPoints = new FailPoints();
    failPoints.configure('rsSyncApplyStop', 'alwaysOn');
    await withMember(async ({ coordinator, clock, storage }) => {
      const held = (): string[] => [...storage.scanRecords(storage.getCollection('local.oplog.rs')!)].map((r) => String((deserializeDocument(r.bytes).o as Doc).msg));
      for (let ms = 0; ms < 10_000 && coordinator.state()?.leader?.writable !== true; ms += 50) await run(clock, 50);
      const core = coordinator.state()!;
      assert.equal(core.leader?.writable, true, `the core caught up and made it writable: ${core.memberState}`);
      assert.equal(core.oplog.at(-1)!.o.msg, 'new primary');
      assert.equal(coordinator.isWritablePrimary(), false, 'not while what it caught up on is not in its store');
      assert.deepEqual(held(), ['initiating set'], 'its no-op waits behind the batch');
      failPoints.configure('rsSyncApplyStop', 'off');
      await run(clock, 200);
      assert.equal(coordinator.isWritablePrimary(), true);
      assert.deepEqual(held(), ['initiating set', 'from m1', 'new primary']);
    }, { network: catchUpNetwork(), failPoints });
  });

  it('a candidate\'s vote for itself is in local.replset.election before any real vote request leaves', async () => {
    await withMember(async ({ coordinator, clock, sent }) => {
      await run(clock, 3000);
      assert.equal(coordinator.state()?.memberState, 'PRIMARY');
      assert.equal(coordinator.isWritablePrimary(), true);
      const real = sent.filter((s) => 'replSetRequestVotes' in s.cmd && s.cmd.dryRun === false);
      assert.ok(real.length >= 2, 'it asked both other members');
      for (const r of real) {
        assert.equal(Number(r.voteOnDisk?.term), Number(r.cmd.term), 'the vote of the request\'s term was on disk when it left');
        assert.equal(Number(r.voteOnDisk?.candidateIndex), 0);
      }
      const dryRuns = sent.filter((s) => 'replSetRequestVotes' in s.cmd && s.cmd.dryRun === true);
      assert.ok(dryRuns.every((d) => d.voteOnDisk === undefined), 'a dry run stores nothing');
    });
  });

  it('a voter writes its vote to local.replset.election before it answers, and refuses a second candidate in that term', async () => {
    await withMember(async ({ coordinator, clock, local }) => {
      await run(clock, 100);
      const request = (candidateIndex: number): Doc => ({
        replSetRequestVotes: 1, setName: 'rs0', dryRun: false, term: Long.fromNumber(5), candidateIndex: Long.fromNumber(candidateIndex), configVersion: Long.fromNumber(1),
        lastAppliedOpTime: { ts: new Timestamp({ t: 1_800_000_000, i: 1 }), t: Long.fromNumber(4) },
      });
      const granted = coordinator.handleRequestVotes(request(1));
      assert.equal(granted.voteGranted, true);
      const onDisk = local.findOne(ELECTION_NS);
      assert.equal(Number(onDisk?.term), 5);
      assert.equal(Number(onDisk?.candidateIndex), 1);
      const refused = coordinator.handleRequestVotes(request(2));
      assert.equal(refused.voteGranted, false);
      assert.match(String(refused.reason), /already voted/);
    });
  });

  it('bumps the topology version on every state change and wakes an awaitable hello waiting on it', async () => {
    await withMember(async ({ coordinator, clock }) => {
      const counter = Number((coordinator.topologyVersion().counter as Long).toNumber());
      let woke = false;
      void coordinator.waitForTopologyChange(counter, 60_000).then(() => { woke = true; });
      await run(clock, 3000);
      assert.equal(woke, true);
      assert.ok(Number((coordinator.topologyVersion().counter as Long).toNumber()) > counter);
      const id = coordinator.electionId()!.toHexString();
      assert.equal(id.slice(0, 8), '7fffffff');
      assert.equal(BigInt(`0x${id.slice(8)}`), BigInt(coordinator.state()!.term));
    });
  });

  it('replSetInitiate stores the config only after every other member answered the quorum check', async () => {
    const raw = { _id: 'rs0', members: [0, 1, 2].map((i) => ({ _id: i, host: `m${i}:27017` })) };
    await withMember(async ({ coordinator, local }) => {
      await assert.rejects(coordinator.initiate(raw), (e: MongoError) => e.code === 74 && /m2:27017 failed with Connection refused/.test(e.message));
      assert.equal(local.findOne(CONFIG_NS), undefined);
      assert.equal(coordinator.state(), null);
      await assert.rejects(coordinator.initiate({ ...raw, _id: 'other' }), (e: MongoError) => e.code === 93);
    }, { initiated: false, down: 'm2:27017' });
    await withMember(async ({ coordinator, local }) => {
      await coordinator.initiate(raw);
      assert.equal(local.findOne(CONFIG_NS)?._id, 'rs0');
      assert.equal(coordinator.state()?.memberState, 'SECONDARY');
      await assert.rejects(coordinator.initiate(raw), (e: MongoError) => e.code === 23);
    }, { initiated: false });
  });

  it('replSetReconfig: refused off a writable primary; on one whose config is not yet committed, CurrentConfigNotCommittedYet at its deadline with nothing stored; force stores a far higher version', async () => {
    await withMember(async ({ coordinator, clock, local }) => {
      const next = { ...CONFIG, version: 2, settings: { ...(CONFIG.settings as Doc), heartbeatIntervalMillis: 400 } };
      const refusal = (code: number) => (err: unknown): boolean => err instanceof MongoError && err.code === code;
      await assert.rejects(coordinator.reconfig(next, false, undefined), refusal(ErrorCodes.NotWritablePrimary));
      await run(clock, 3000);
      assert.equal(coordinator.isWritablePrimary(), true);
      // The members' answers never report the primary's no-op durable: the commit point stays in
      // the term before, so the config is not committed.
      await assert.rejects(coordinator.reconfig(next, false, performance.now() - 1), refusal(ErrorCodes.CurrentConfigNotCommittedYet));
      assert.equal((local.findOne(CONFIG_NS) as Doc).version, 1);
      await coordinator.reconfig(next, true, undefined);
      const stored = local.findOne(CONFIG_NS) as Doc;
      assert.ok(Number(stored.version) >= 10_002, String(stored.version));
      assert.equal(stored.term, -1);
      assert.equal(coordinator.state()!.config.version, stored.version);
    });
  });
});

