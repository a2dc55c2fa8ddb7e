import { Long, ObjectId, Timestamp } from 'bson';
import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Clock, Timer } from '../base/clock.js';
import { hangIfFailPointEnabled, type FailPoints } from '../base/fail_points.js';
import { steadyClock } from './steady_clock.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { ReplEffect } from '../repl/effects.js';
import { isUp } from '../repl/member_data.js';
import { isReadable } from '../repl/member_state.js';
import type { OplogFetch, ReplMessage, RollbackFetch } from '../repl/messages.js';
import { compareOpTime, formatOpTime, minOpTime, NULL_OP_TIME, opTimeEquals, OPTIME_TS_PER_SECOND, type OpTime } from '../repl/op_time.js';
import type { OplogEntry } from '../repl/oplog_entry.js';
import { isElectable, isVoter, replSetSettings } from '../repl/repl_set_config.js';
import { nextWakeMs, startUp, topologyStep, type ReplEvent } from '../repl/topology_coordinator.js';
import { lastAppliedOpTime, primaryIndex, type TopologyState } from '../repl/topology_state.js';
import type { Network } from '../wire/network.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { enableOplog, type ReplicatedOplog } from '../oplog/replicated_oplog.js';
import { OPLOG_NS } from '../oplog/oplog_entry.js';
import { coreEntry, FetchedEntries, rollbackEntries, sourceMetadataOf } from './fetched_entries.js';
import { initialSync } from './initial_syncer.js';
import { oldestOplogEntry, OplogSourceCursor } from './oplog_source_cursor.js';
import { oplogQueryMetadata } from './oplog_query_metadata.js';
import {
  heartbeatCommand, heartbeatReply, heartbeatSender, parseHeartbeatReply, parseRequestVotes, parseRequestVotesReply, parseUpdatePosition,
  requestVotesCommand, requestVotesReply, updatePositionCommand,
} from './member_messages.js';
import { bsonTimestamp, coreTs } from './op_time_bson.js';
import { checkInitiateConfig, checkReconfigConfig, coreConfig } from './replica_set_config_document.js';
import { checkReconfigQuorum } from './reconfig_quorum.js';
import { configCommitted, configPropagated, reconfigRefusal } from '../repl/reconfig.js';
import { bumpRollbackId, type ReplStore } from './repl_store.js';
import { replSetStatus } from './repl_set_status.js';
import { rollBackTo } from './rollback_data.js';
import type { LocalCollections } from '../query/exec/local_collection.js';

// The process's cluster time, as the coordinator reads and moves it (sessions' LogicalClock).
export interface ClusterTimeSource {
  now(): Timestamp;
  advance(seen: Timestamp): void;
}

export interface ReplicationCoordinatorDeps {
  setName: string;
  store: ReplStore;
  network: Network;
  clock: Clock;
  clusterTime: ClusterTimeSource;
  // Whether a config's host names this process (asked once its port is bound).
  isSelf(host: string): boolean;
  logger: Logger;
  seed?: number;
  // The node's storage: local.oplog.rs is enabled on it at start.
  storage: StorageEngine;
  // --oplogSize, in MB.
  oplogSizeMB?: number;
  // A document's shard key fields and _id on a collection sharded here (the oplog's entries).
  documentKey?: (ns: string, doc: Doc) => Doc | undefined;
  // This member became a writable primary: what caches replicated data in memory (the session
  // catalog's records, which the applier wrote beneath it) reads it again.
  onWritablePrimary?: () => void;
  // Every member state change, after onWritablePrimary: the primary-only services start or stop.
  onStateChanged?: (writablePrimary: boolean, term: number) => void;
  // A rollback took the store back: the same caches read it again.
  onDataRolledBack?: () => void;
  // Where rollback files go (<dbpath>/rollback/...), and the local database the rollback id is in.
  dbpath: string;
  local: LocalCollections;
  // rsSyncApplyStop holds fetched batches before the store takes them, as MongoDB's holds its applier.
  failPoints?: FailPoints;
}

// A member message unanswered this long counts as unanswered (MongoDB's heartbeat timeout is 10 s;
// the election timeout bounds it, so a dead member is noticed within one).
const MEMBER_REQUEST_TIMEOUT_MS = 10_000;
// Rollback reads the source's oplog from our commit point in one batch.
const ROLLBACK_FETCH_BATCH = 10_000;
// An entry no batch may hold (the null optime): what a malformed batch is to the core.
const NOT_FOLLOWING: OplogEntry = { ts: NULL_OP_TIME.ts, t: NULL_OP_TIME.t, op: 'n', o: {} };
// replSetSyncFrom warns of a member this far behind us (10 s of optime distance).
const SYNC_FROM_LAG_WARNING_TS = 10 * OPTIME_TS_PER_SECOND;
// How often a reconfig looks again at what it waits for (its config committed, then spread).
const RECONFIG_POLL_MS = 50;
// How many of its newest oplog entries a member gives the core at start (its last one at least).
const OPLOG_TAIL_AT_START = 100;

// An event as the driver makes it: the time and the clock's next timestamp are added when it runs.
type DriverEvent = ReplEvent extends infer E ? (E extends ReplEvent ? Omit<E, 'nowMs' | 'nextTs'> : never) : never;

// MongoDB's ReplicationCoordinatorImpl for one process: holds the pure core's state, feeds it the
// events of its timer, its member messages' replies and the member commands it receives, and runs
// its effects in their order: persist (durable before anything is sent), local (the node's view),
// then sends as wire commands. The core's oplog is a view of local.oplog.rs's tail: the entries
// this primary's storage committed enter it once per event-loop turn, fetched batches are applied
// from their full entries (fetched_entries.ts) when the core appends them.
export class ReplicationCoordinator {
  private core: TopologyState | null = null;
  private configDocument: Doc | undefined;
  private timer: Timer | undefined;
  private stopped = false;
  private readonly processId = new ObjectId();
  private counter = 0;
  private readonly topologyWaiters: (() => void)[] = [];
  private electionTime: Timestamp | undefined;
  private initiating = false;
  private readonly startedAtMs: number;
  private readonly upSinceMs = new Map<number, number>();
  private fetchingConfig = false;
  private readonly progressListeners: (() => void)[] = [];
  private oplog: ReplicatedOplog | undefined;
  private readonly fetched = new FetchedEntries();
  private readonly sourceCursor: OplogSourceCursor;
  // The last fetched batch being applied: what this member says of its position waits for it.
  private persisting: Promise<void> | undefined;
  // While batches are being applied, the last entry the store holds: the core takes a fetched batch
  // (and counts it as applied) before the store has it, and a read goes by what the store holds.
  private stored: OpTime = NULL_OP_TIME;
  // A new primary's drain (MongoDB's signalDrainComplete): the core made it writable, and it is not
  // until the batches it fetched as a secondary are in the store, so no write, retry or commit
  // decision runs ahead of what it had replicated (a prepared transaction not yet in the store is
  // NoSuchTransaction to a coordinator's commit, which takes that as done), and its own entries
  // (the new term's no-op first) follow them in the oplog. The term being drained into.
  private draining: number | undefined;
  private localWritesPending = false;
  private trimPending = false;
  private initialSyncing = false;
  // The source the core asked for the oplog while initial sync ran: answered once it is done, so
  // the core does not wait out its fetch timeout first.
  private fetchAfterInitialSync: number | undefined;
  // Set when this member cannot go on replicating (a rollback it cannot do yet, an entry that
  // failed to apply): it applies and fetches nothing more and serves no reads.
  private haltedBecause: string | undefined;
  // Raised by a resync: what was fetched before it is not applied after it.
  private generation = 0;
  // A replSetReconfig between its checks and its install: another is refused meanwhile.
  private reconfiguring = false;

  private readonly deps: ReplicationCoordinatorDeps;

  // The core's deadlines survive a step back of the wall clock (steady_clock.ts).
  constructor(deps: ReplicationCoordinatorDeps) {
    this.deps = { ...deps, clock: steadyClock(deps.clock) };
    this.startedAtMs = this.deps.clock.now();
    this.sourceCursor = new OplogSourceCursor(deps.network, deps.logger);
  }

  get setName(): string {
    return this.deps.setName;
  }

  // Reads the config and the last vote on disk; without a config the member waits for
  // replSetInitiate or for a member's heartbeat to bring one.
  // local.oplog.rs is enabled first: a member restarted on its files continues from its tail.
  start(): void {
    const { storage } = this.deps;
    this.oplog = enableOplog(storage, {
      term: () => this.core?.term ?? 0,
      checkCanWrite: () => {
        if (!this.isWritablePrimary()) throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary');
      },
      clock: { advance: (ts) => this.deps.clusterTime.advance(ts), wallMs: () => this.deps.clock.now() },
      ...(this.deps.oplogSizeMB === undefined ? {} : { oplogSizeMB: this.deps.oplogSizeMB }),
      ...(this.deps.documentKey === undefined ? {} : { documentKey: this.deps.documentKey }),
    });
    storage.observers.push({
      onInsert: (_w, ns) => {
        if (ns === OPLOG_NS) this.localWritesCommitted();
      },
    });
    const doc = this.deps.store.readConfig();
    if (doc !== undefined) this.install(doc, this.oplogTail());
  }

  private oplogTail(): OplogEntry[] {
    return this.oplog!.reads.lastEntries(OPLOG_TAIL_AT_START).map(coreEntry);
  }

  stop(): void {
    this.stopped = true;
    this.sourceCursor.close();
    this.oplog?.disable();
    this.timer?.cancel();
    for (const wake of this.topologyWaiters.splice(0)) wake();
  }

  state(): TopologyState | null {
    return this.core;
  }

  config(): Doc | undefined {
    return this.configDocument;
  }

  topologyVersion(): Doc {
    return { processId: this.processId, counter: Long.fromNumber(this.counter) };
  }

  isWritablePrimary(): boolean {
    return this.core?.role === 'leader' && this.core.leader?.writable === true && this.draining === undefined;
  }

  // SECONDARY and PRIMARY serve reads (with secondaryOk on a secondary); a halted member none.
  canServeReads(): boolean {
    return this.core !== null && this.haltedBecause === undefined && isReadable(this.core.memberState);
  }

  // The metadata an oplog query's reply carries when asked ($replData, $oplogQueryData).
  oplogQueryMetadata(cmd: Doc): Doc {
    this.flushLocalWrites();
    if (this.core === null) return {};
    const onDisk = this.oplog?.reads.lastOpTime();
    const lastApplied = onDisk === undefined ? lastAppliedOpTime(this.core) : { ts: coreTs(onDisk.ts), t: onDisk.t };
    return oplogQueryMetadata(this.core, lastApplied, this.deps.store.rollbackId(), cmd);
  }

  // A no-op entry in this primary's term (a linearizable read's confirmation), and its optime;
  // undefined when this member is not a writable primary.
  writeNoop(o: Doc): OpTime | undefined {
    if (!this.isWritablePrimary()) return undefined;
    this.step({ type: 'clientWrite', o });
    return this.core === null ? undefined : lastAppliedOpTime(this.core);
  }

  electionId(): ObjectId | undefined {
    if (this.core?.role !== 'leader') return undefined;
    // MongoDB's OID::fromTerm: 0x7fffffff, then the term, so ids rise with the term.
    const bytes = Buffer.alloc(12);
    bytes.writeUInt32BE(0x7fffffff, 0);
    bytes.writeBigUInt64BE(BigInt(this.core.term), 4);
    return new ObjectId(bytes);
  }

  lastElectionTime(): Timestamp | undefined {
    return this.core?.role === 'leader' ? this.electionTime : undefined;
  }

  // Called after every event the core took (positions, the commit point, the member state may have
  // moved): what waits for replication (write concern, majority reads) checks again.
  onProgress(listener: () => void): void {
    this.progressListeners.push(listener);
  }

  private progressed(): void {
    for (const listener of this.progressListeners) listener();
  }

  // Resolves when the topology version moves past `counter` or after `ms`.
  waitForTopologyChange(counter: number, ms: number): Promise<void> {
    if (counter !== this.counter || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.deps.clock.setTimer(ms, () => done(), { unref: true });
      const done = (): void => {
        timer.cancel();
        const i = this.topologyWaiters.indexOf(done);
        if (i >= 0) this.topologyWaiters.splice(i, 1);
        resolve();
      };
      this.topologyWaiters.push(done);
    });
  }

  // --- replSetInitiate ---------------------------------------------------------------------

  async initiate(raw: Doc): Promise<void> {
    if (this.core !== null || this.initiating) throw new MongoError(ErrorCodes.AlreadyInitialized, 'already initialized');
    const { document, selfIndex } = checkInitiateConfig(raw, this.deps.setName, (h) => this.deps.isSelf(h));
    this.initiating = true;
    try {
      await this.quorumCheck(document, selfIndex);
      if (this.core !== null) throw new MongoError(ErrorCodes.AlreadyInitialized, 'already initialized');
      const ts = this.nextTs();
      const first: OplogEntry = { ts, t: -1, op: 'n', o: { msg: 'initiating set' } };
      this.deps.clusterTime.advance(bsonTimestamp(ts));
      this.deps.store.writeConfig(document);
      this.oplog?.appendNoop({ ...first.o }, bsonTimestamp(ts), first.t);
      this.install(document, [first]);
      this.deps.logger.info({ c: 'REPL', config: document }, 'replSetInitiate config object with members parses ok');
    } finally {
      this.initiating = false;
    }
  }

  // MongoDB's quorum check: every other member must answer a heartbeat as an empty member of
  // this set before the config is stored anywhere.
  private async quorumCheck(document: Doc, selfIndex: number): Promise<void> {
    const config = coreConfig(document);
    const failures: string[] = [];
    await Promise.all(config.members.map(async (m, i) => {
      if (i === selfIndex) return;
      try {
        const reply = await this.deps.network.command(m.host, 'admin', { ...heartbeatCommand(config, selfIndex, 0), checkEmpty: true }, { timeoutMs: MEMBER_REQUEST_TIMEOUT_MS });
        if (reply.ok !== 1) failures.push(`${m.host} failed with ${String(reply.errmsg)}`);
      } catch (err) {
        failures.push(`${m.host} failed with ${(err as Error).message}`);
      }
    }));
    if (failures.length > 0) {
      throw new MongoError(ErrorCodes.NodeNotFound, `replSetInitiate quorum check failed because not all proposed set members responded affirmatively: ${failures.join(', ')}`);
    }
  }

  private install(document: Doc, oplog: readonly OplogEntry[]): void {
    const config = coreConfig(document);
    const selfIndex = config.members.findIndex((m) => this.deps.isSelf(m.host));
    if (selfIndex < 0) {
      this.deps.logger.error({ c: 'REPL' }, 'Our replica set config is invalid or we are not a member of it');
      return;
    }
    this.configDocument = document;
    const step = startUp({
      config, selfIndex, lastVote: this.deps.store.readLastVote(), oplog, nowMs: this.deps.clock.now(), nextTs: this.nextTs(), seed: this.deps.seed ?? Math.floor(Math.random() * 2 ** 31),
    });
    this.core = step.state;
    this.bumpTopologyVersion();
    this.execute(step.effects);
    this.schedule();
    this.progressed();
  }

  // --- events ------------------------------------------------------------------------------

  private nextTs(): number {
    const now = this.deps.clusterTime.now();
    return coreTs(now) + 1;
  }

  // Writes this primary's storage committed enter the core once per turn of the event loop (each
  // step copies the core's state), and before any other event, so the core decides on all of them.
  private localWritesCommitted(): void {
    if (this.localWritesPending) return;
    this.localWritesPending = true;
    setImmediate(() => this.flushLocalWrites());
  }

  private flushLocalWrites(): void {
    this.localWritesPending = false;
    const core = this.core;
    if (core === null || this.stopped || !this.isWritablePrimary() || this.oplog === undefined) return;
    const last = lastAppliedOpTime(core);
    const entries = this.oplog.reads.entriesFrom(bsonTimestamp(last.ts + 1)).map(coreEntry).filter((e) => e.t === core.term && compareOpTime({ ts: e.ts, t: e.t }, last) > 0);
    if (entries.length === 0) return;
    this.runEvent({ type: 'localWritesCommitted', entries });
  }

  // One event through the core, its effects run; the reply it makes to `replyTo`, if any.
  private step(event: DriverEvent, replyTo?: number): ReplMessage | undefined {
    if (this.core === null || this.stopped) return undefined;
    this.flushLocalWrites();
    return this.runEvent(event, replyTo);
  }

  private runEvent(event: DriverEvent, replyTo?: number): ReplMessage | undefined {
    if (this.core === null || this.stopped) return undefined;
    const full = { ...event, nowMs: this.deps.clock.now(), nextTs: this.nextTs() } as ReplEvent;
    const before = this.core;
    const { state, effects } = topologyStep(this.core, full);
    this.core = state;
    if (this.persisting === undefined) this.stored = lastAppliedOpTime(before);
    if (state.election !== null && (before.election === null || before.election.term !== state.election.term)) {
      this.deps.logger.info({ c: 'ELECTION', reason: state.election.reason, term: state.election.term }, 'Starting an election');
    }
    const reply = this.execute(effects, replyTo);
    this.schedule();
    this.progressed();
    return reply;
  }

  private schedule(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.core === null || this.stopped) return;
    const at = nextWakeMs(this.core);
    if (!Number.isFinite(at)) return;
    this.timer = this.deps.clock.setTimer(Math.max(0, at - this.deps.clock.now()), () => this.step({ type: 'tick' }), { unref: true });
  }

  // Persist first (each a durable commit, synchronous), then local, then sends: the core lists
  // them in that order, and nothing here reorders them.
  private execute(effects: readonly ReplEffect[], replyTo?: number): ReplMessage | undefined {
    let reply: ReplMessage | undefined;
    for (const e of effects) {
      switch (e.type) {
        case 'persistLastVote':
          this.deps.store.writeLastVote(e.lastVote);
          break;
        case 'appendOplog':
          this.appendOplog(e.entries);
          break;
        case 'truncateOplogAfter':
          this.rollBack(e.opTime);
          break;
        case 'memberStateChanged':
          if (e.state === 'PRIMARY' && e.writable && this.core?.leader?.firstOpTimeOfMyTerm) this.electionTime = bsonTimestamp(this.core.leader.firstOpTimeOfMyTerm.ts);
          this.deps.logger.info({ c: 'REPL', newState: e.state, term: e.term, writable: e.writable }, 'Member state changed');
          if (e.state === 'PRIMARY' && e.writable && this.persisting !== undefined) {
            this.drainInto(e.term, this.persisting);
            break;
          }
          this.draining = undefined;
          this.stateChanged(e.state === 'PRIMARY' && e.writable, e.term);
          break;
        case 'rollbackRefused':
          this.halt(`rollback refused: ${e.reason}`);
          break;
        case 'resyncNeeded': {
          const { reason } = e;
          const generation = this.generation;
          void (this.persisting ?? Promise.resolve()).then(() => {
            if (generation === this.generation && !this.stopped) this.resync(reason);
          });
          break;
        }
        case 'commitPointAdvanced':
          this.oplog?.setTruncateBound(bsonTimestamp(e.opTime.ts));
          this.trimSoon();
          break;
        case 'writeAccepted':
        case 'writeRejected':
          break;
        case 'send': {
          if (replyTo === e.to && e.message.kind.endsWith('Response') && reply === undefined) {
            reply = e.message;
            break;
          }
          // Persist before send: what follows a fetched batch leaves once the batch is applied.
          const { to, message } = e;
          if (this.persisting === undefined) this.send(to, message);
          else void this.persisting.then(() => this.send(to, message));
          break;
        }
      }
    }
    return reply;
  }

  // The core's entries: those fetched are applied from their full entries, as one LMDB commit in
  // the background (what is sent after it waits for it); those it made itself (the new primary's
  // no-op, a primary's writeNoop) are written as no-ops. An entry appended from an answer that is
  // not a no-op and lacks its full entry went missing on the way: written as a no-op it would drop
  // a write at an optime the set agrees on, so the member halts instead.
  private appendOplog(entries: readonly OplogEntry[]): void {
    const oplog = this.oplog;
    if (oplog === undefined || this.haltedBecause !== undefined) return;
    const docs = this.fetched.take(entries);
    const missing = this.fetched.handingOver ? entries.find((entry, i) => docs[i] === undefined && entry.op !== 'n') : undefined;
    if (missing !== undefined) {
      this.halt(`the fetched oplog entry at ${formatOpTime(missing)} (op '${missing.op}') is not at hand to apply`);
      return;
    }
    const fetched: Doc[] = [];
    const noops: OplogEntry[] = [];
    entries.forEach((entry, i) => {
      const doc = docs[i];
      if (doc !== undefined) fetched.push(doc);
      else noops.push(entry);
    });
    const writeNoops = (): void => {
      for (const entry of noops) oplog.appendNoop({ ...entry.o }, bsonTimestamp(entry.ts), entry.t);
    };
    // The core's own entries go in at once, unless fetched batches before them are still going in.
    if (fetched.length === 0 && this.persisting === undefined) {
      writeNoops();
      return;
    }
    const generation = this.generation;
    const last = entries[entries.length - 1]!;
    const apply = async (): Promise<void> => {
      const { failPoints } = this.deps;
      if (failPoints !== undefined && fetched.length > 0) await hangIfFailPointEnabled({ failPoints }, 'rsSyncApplyStop', this.deps.clock);
      if (generation !== this.generation) return;
      writeNoops();
      if (fetched.length > 0) await oplog.applyOplogEntriesGrouped(fetched);
      if (generation === this.generation) this.stored = { ts: last.ts, t: last.t };
    };
    const applied = (this.persisting ?? Promise.resolve()).then(apply).catch((err: unknown) => {
      this.halt(`applying fetched oplog entries failed: ${(err as Error).message}`);
    });
    this.persisting = applied;
    void applied.then(() => {
      if (this.persisting === applied) this.persisting = undefined;
      // A read waiting for the store to reach the commit point or a cluster time looks again.
      this.progressed();
    });
  }

  private stateChanged(writablePrimary: boolean, term: number): void {
    if (writablePrimary) {
      this.sourceCursor.close();
      this.deps.onWritablePrimary?.();
    }
    this.deps.onStateChanged?.(writablePrimary, term);
    this.bumpTopologyVersion();
  }

  // Writable once `applied` (every batch before, and the new term's no-op) is in the store, if the
  // member is still the primary of that term by then.
  private drainInto(term: number, applied: Promise<void>): void {
    this.draining = term;
    this.bumpTopologyVersion();
    void applied.then(() => {
      if (this.draining !== term || this.stopped) return;
      this.draining = undefined;
      const core = this.core;
      if (core === null || core.role !== 'leader' || core.term !== term || core.leader?.writable !== true) return;
      this.deps.logger.info({ c: 'REPL', term }, 'Drain complete: writable primary');
      this.stateChanged(true, term);
      this.progressed();
    });
  }

  // The last entry of the core's oplog that the store holds: all of them unless a fetched batch is
  // still being applied. What a causally consistent read on a secondary waits for.
  storedOpTime(): OpTime | undefined {
    const core = this.core;
    if (core === null) return undefined;
    const last = lastAppliedOpTime(core);
    return this.persisting === undefined ? last : minOpTime(this.stored, last);
  }

  // The commit point as far as the store holds it: where a majority read reads and a change stream
  // stops. A secondary learns a commit point past entries it has fetched but not yet applied; a
  // read there would miss them while saying it saw everything committed.
  readableCommitPoint(): OpTime | undefined {
    const core = this.core;
    const stored = this.storedOpTime();
    if (core === null || stored === undefined) return undefined;
    return minOpTime(core.lastCommittedOpTime, stored);
  }

  // The core found our last entries absent on the sync source: the store goes back to the common
  // point (rollback_data.ts: rollback files first, then the version history's restore, the
  // rollback id raised), after any batch still being applied, and before the source's entries
  // after that point (the core's next appendOplog, chained behind it). What cannot be undone that
  // way halts the member: a majority-committed write is never undone, and a store the history no
  // longer reaches back from needs a resync.
  private rollBack(to: OpTime): void {
    const oplog = this.oplog;
    const core = this.core;
    if (oplog === undefined || core === null || this.haltedBecause !== undefined) return;
    const majorityCommitPoint = core.lastCommittedOpTime.ts > 0 ? bsonTimestamp(core.lastCommittedOpTime.ts) : undefined;
    const undo = (): void => {
      const result = rollBackTo(bsonTimestamp(to.ts), { storage: this.deps.storage, reads: oplog.reads, dbpath: this.deps.dbpath, majorityCommitPoint, local: this.deps.local, now: () => new Date(this.deps.clock.now()) });
      if (result.outcome === 'refused') {
        this.halt(`rollback to ${formatOpTime(to)} refused: ${result.reason}`);
        return;
      }
      if (result.outcome === 'needsResync') {
        this.resync(`rollback to ${formatOpTime(to)} needs a resync: ${result.reason}`);
        return;
      }
      this.stored = to;
      this.deps.logger.warn({ c: 'ROLLBACK', commonPoint: formatOpTime(to), rollbackId: result.rollbackId, undoneEntries: result.undoneEntries, files: result.files }, 'Rollback finished');
      this.deps.onDataRolledBack?.();
    };
    const done = (this.persisting ?? Promise.resolve()).then(undo).catch((err: unknown) => {
      this.halt(`rollback to ${formatOpTime(to)} failed: ${(err as Error).message}`);
    });
    this.persisting = done;
    void done.then(() => {
      if (this.persisting === done) this.persisting = undefined;
    });
  }

  // The store cannot go back to the common point (the version history does not reach it, as after
  // a restart): the member drops its data and empties its oplog (nothing logged), raises its
  // rollback id, and starts again in STARTUP2 with an empty oplog, so initial sync copies a sync
  // source's data. A batch the core took before this is not applied (`generation`).
  private resync(reason: string): void {
    const document = this.configDocument;
    const oplog = this.oplog;
    if (document === undefined || oplog === undefined) {
      this.halt(reason);
      return;
    }
    this.deps.logger.warn({ c: 'ROLLBACK', reason }, 'This member drops its data and syncs again from a sync source');
    this.generation += 1;
    this.sourceCursor.close();
    this.fetched.clear();
    oplog.clearForResync();
    bumpRollbackId(this.deps.local);
    this.deps.onDataRolledBack?.();
    this.install(document, []);
  }

  // This member stops replicating: it applies and fetches nothing more, serves no reads, and
  // stands for no election on a view of an oplog it does not hold.
  private halt(reason: string): void {
    if (this.haltedBecause !== undefined) return;
    this.haltedBecause = reason;
    this.deps.logger.error({ c: 'REPL', reason }, 'Replication stopped: this member applies nothing more and serves no reads');
    this.sourceCursor.close();
    this.fetched.clear();
    this.bumpTopologyVersion();
    setImmediate(() => this.step({ type: 'freeze', frozenUntilMs: Number.POSITIVE_INFINITY }));
  }

  // The core keeps the tail from the commit point; trimmed once per turn of the event loop.
  private trimSoon(): void {
    if (this.trimPending) return;
    this.trimPending = true;
    setImmediate(() => {
      this.trimPending = false;
      this.step({ type: 'trimOplog' });
    });
  }

  private bumpTopologyVersion(): void {
    this.counter += 1;
    for (const wake of this.topologyWaiters.splice(0)) wake();
  }

  // A member message as a wire command; its reply comes back as an event. The oplog fetcher's and
  // rollback's queries are part 2's: dropped here, so the core's fetcher times them out and tries
  // again, harmlessly.
  private send(to: number, message: ReplMessage): void {
    const core = this.core!;
    const host = core.config.members[to]!.host;
    const config = core.config;
    let cmd: Doc;
    let parse: (reply: Doc) => ReplMessage | null;
    const sentAtMs = this.deps.clock.now();
    switch (message.kind) {
      case 'replSetHeartbeat':
        cmd = heartbeatCommand(config, core.selfIndex, message.term);
        parse = (reply) => {
          this.noteHeartbeatReply(reply);
          return parseHeartbeatReply(config, reply, sentAtMs);
        };
        break;
      case 'replSetRequestVotes':
        cmd = requestVotesCommand(message);
        parse = (reply) => parseRequestVotesReply(reply, message);
        break;
      case 'replSetUpdatePosition':
        cmd = updatePositionCommand(config, core.selfIndex, message);
        parse = () => null;
        break;
      case 'oplogFetch':
        this.fetchFrom(to, host, message);
        return;
      case 'rollbackFetch':
        this.rollbackFetchFrom(to, host, message);
        return;
      default:
        return;
    }
    this.deps.network.command(host, 'admin', cmd, { timeoutMs: MEMBER_REQUEST_TIMEOUT_MS }).then((reply) => {
      if (this.core === null || this.core.config !== config) return;
      const response = parse(reply);
      if (response !== null) this.step({ type: 'receive', from: to, message: response });
      if (message.kind === 'replSetHeartbeat' && isPlainObject(reply.config)) this.takeNewerConfig(reply.config);
      if (message.kind === 'replSetHeartbeat') {
        if (response === null) this.upSinceMs.delete(to);
        else if (!this.upSinceMs.has(to)) this.upSinceMs.set(to, this.deps.clock.now());
        this.maybeStartInitialSync(to);
      }
    }, (err: unknown) => {
      this.deps.logger.debug({ c: 'REPL', host, err: (err as Error).message, command: message.kind }, 'Member request failed');
    });
  }

  private noteHeartbeatReply(reply: Doc): void {
    const t = reply.$clusterTime;
    if (typeof t === 'object' && t !== null && (t as Doc).clusterTime instanceof Timestamp) {
      try {
        this.deps.clusterTime.advance((t as Doc).clusterTime as Timestamp);
      } catch {
        // A time the clock refuses is the network layer's business; the heartbeat still counts.
      }
    }
  }

  // The fetcher's query on the source (oplog_source_cursor.ts); its answer comes back as the
  // core's oplogFetchResponse. A member with no oplog is initial sync's, not the fetcher's.
  private fetchFrom(to: number, host: string, req: OplogFetch): void {
    const core = this.core!;
    if (this.haltedBecause !== undefined) return;
    if (core.oplog.length === 0) {
      this.fetchAfterInitialSync = to;
      return;
    }
    const config = core.config;
    void this.sourceCursor.fetch(host, req, { term: core.term, lastKnownCommittedOpTime: core.lastCommittedOpTime, nowMs: () => this.deps.clock.now() }).then((out) => {
      if (out === undefined || this.core === null || this.core.config !== config || this.stopped) return;
      if (out.ok) {
        this.fetched.during(out.full, () => this.step({ type: 'receive', from: to, message: out.response }));
        return;
      }
      this.deps.logger.error({ c: 'REPL', host, err: out.error.message }, 'The sync source sent a malformed oplog entry: nothing of its batch is applied, and the source is left');
      // The core denylists a source whose batch does not follow our last entry; this one does not.
      this.step({ type: 'receive', from: to, message: { kind: 'oplogFetchResponse', status: 'ok', entries: [NOT_FOLLOWING], metadata: out.metadata } });
    });
  }

  // Rollback's read of the source's oplog from our commit point: a plain find.
  private rollbackFetchFrom(to: number, host: string, req: RollbackFetch): void {
    const config = this.core!.config;
    const cmd = { find: 'oplog.rs', filter: { ts: { $gte: bsonTimestamp(req.from.ts) } }, batchSize: ROLLBACK_FETCH_BATCH, singleBatch: true, $replData: 1, $oplogQueryData: 1 };
    this.deps.network.command(host, 'local', cmd, { timeoutMs: MEMBER_REQUEST_TIMEOUT_MS }).then(async (reply) => {
      if (this.core === null || this.core.config !== config || this.stopped || reply.ok !== 1) return;
      const kept = rollbackEntries((reply.cursor as Doc).firstBatch as Doc[]);
      if (!kept.ok) {
        this.deps.logger.error({ c: 'ROLLBACK', host, err: kept.error.message }, 'The sync source\'s oplog holds a malformed entry; no rollback from it');
        return;
      }
      const first = kept.entries[0];
      const oldest = first !== undefined && opTimeEquals({ ts: first.ts, t: first.t }, req.from) ? {} : { oldestOpTime: await oldestOplogEntry(this.deps.network, host) };
      this.fetched.during(kept.full, () => this.step({ type: 'receive', from: to, message: { kind: 'rollbackFetchResponse', entries: kept.entries, metadata: sourceMetadataOf(reply), ...oldest } }));
    }).catch((err: unknown) => {
      this.deps.logger.info({ c: 'REPL', host, err: (err as Error).message }, 'Rollback could not read the sync source\'s oplog');
    });
  }

  // A STARTUP2 member with no oplog (new, or its files wiped) clones a readable member that has
  // one (initial_syncer.ts), then is a SECONDARY from the last entry it applied.
  private maybeStartInitialSync(from: number): void {
    const core = this.core;
    const oplog = this.oplog;
    if (core === null || oplog === undefined || core.memberState !== 'STARTUP2' || core.oplog.length > 0 || this.initialSyncing || this.haltedBecause !== undefined) return;
    const m = core.members[from]!;
    if (m.state === null || !isReadable(m.state) || compareOpTime(m.appliedOpTime, NULL_OP_TIME) <= 0) return;
    const host = core.config.members[from]!.host;
    this.initialSyncing = true;
    initialSync(host, { network: this.deps.network, storage: this.deps.storage, oplog, logger: this.deps.logger }).then((last) => {
      this.step({ type: 'initialSyncDone', lastEntry: coreEntry(last) });
      const source = this.fetchAfterInitialSync;
      this.fetchAfterInitialSync = undefined;
      const after = this.core;
      if (source !== undefined && after !== null && after.fetch.syncSourceIndex === source && after.fetch.inFlight?.kind === 'oplogFetch') {
        this.fetchFrom(source, after.config.members[source]!.host, { kind: 'oplogFetch', lastFetched: lastAppliedOpTime(after), term: after.term });
      }
    }, (err: unknown) => {
      this.deps.logger.error({ c: 'INITSYNC', host, err: (err as Error).message }, 'Initial sync attempt failed; another follows');
    }).finally(() => {
      this.initialSyncing = false;
    });
  }

  // --- member commands ---------------------------------------------------------------------

  // replSetHeartbeat. An empty member answers a quorum check, and fetches the config of a member
  // of its set that has one (MongoDB's heartbeat back to a sender with a newer config).
  handleHeartbeat(cmd: Doc): Doc {
    const setName = cmd.replSetHeartbeat;
    if (setName !== this.deps.setName) {
      throw new MongoError(ErrorCodes.InconsistentReplicaSetNames, `Our set name of ${this.deps.setName} does not match name ${String(setName)} reported by remote node`);
    }
    if (this.core === null) {
      if (cmd.checkEmpty === true) return { ok: 1 };
      if (Number(cmd.configVersion) > 0 && typeof cmd.from === 'string') this.fetchConfigFrom(cmd.from);
      throw new MongoError(ErrorCodes.NotYetInitialized, 'Received heartbeat while not yet initialized');
    }
    if (cmd.checkEmpty === true) throw new MongoError(ErrorCodes.InvalidReplicaSetConfig, `${this.core.config.members[this.core.selfIndex]!.host} is already a member of replica set ${this.deps.setName}`);
    // A sender with a newer config: this member asks it for that config (MongoDB's heartbeat back).
    if (Number(cmd.configVersion) > this.configVersion() && typeof cmd.from === 'string' && cmd.from !== '') this.fetchConfigFrom(cmd.from);
    const config = this.core.config;
    const from = heartbeatSender(config, cmd);
    if (from < 0 || from === this.core.selfIndex) {
      // Someone outside the config: answered with what this member is, nothing learned.
      return heartbeatReply(config, { kind: 'replSetHeartbeatResponse', setName: config._id, term: this.core.term, state: this.core.memberState, appliedOpTime: lastAppliedOpTime(this.core), durableOpTime: lastAppliedOpTime(this.core), configVersion: config.version, syncSourceIndex: null, lastOpCommitted: this.core.lastCommittedOpTime, sentAtMs: 0 }, this.configIfNewer(cmd));
    }
    const reply = this.step({ type: 'receive', from, message: { kind: 'replSetHeartbeat', setName: String(setName), term: Number(cmd.term ?? -1), configVersion: Number(cmd.configVersion), sentAtMs: 0 } }, from);
    if (reply?.kind !== 'replSetHeartbeatResponse') throw new MongoError(ErrorCodes.InternalError, 'heartbeat not answered');
    // Durable is what the store holds: a primary counts it toward its commit point.
    const stored = this.storedOpTime();
    const durableOpTime = stored === undefined ? reply.durableOpTime : minOpTime(stored, reply.durableOpTime);
    return heartbeatReply(config, { ...reply, durableOpTime }, { ...this.configIfNewer(cmd), ...(this.lastElectionTime() === undefined ? {} : { electionTime: this.lastElectionTime() }) });
  }

  private configIfNewer(cmd: Doc): Doc {
    return Number(cmd.configVersion) < this.configVersion() && this.configDocument !== undefined ? { config: this.configDocument } : {};
  }

  private configVersion(): number {
    return this.configDocument === undefined ? -2 : Number(this.configDocument.version);
  }

  private fetchConfigFrom(host: string): void {
    if (this.fetchingConfig) return;
    this.fetchingConfig = true;
    this.deps.network.command(host, 'admin', { replSetHeartbeat: this.deps.setName, configVersion: -2, hbv: 1, from: '', term: Long.fromNumber(-1) }, { timeoutMs: MEMBER_REQUEST_TIMEOUT_MS }).then((reply) => {
      if (isPlainObject(reply.config)) this.takeNewerConfig(reply.config);
    }, (err: unknown) => {
      this.deps.logger.info({ c: 'REPL', host, err: (err as Error).message }, 'Could not fetch the replica set config');
    }).finally(() => {
      this.fetchingConfig = false;
    });
  }

  // A config a heartbeat brought (MongoDB's heartbeat reconfig): taken when it is of this set and
  // newer than ours, stored, then installed. A member without a config takes only one naming it;
  // a member that finds itself left out is REMOVED.
  private takeNewerConfig(doc: Doc): void {
    if (doc._id !== this.deps.setName || Number(doc.version) <= this.configVersion() || this.stopped) return;
    let config;
    try {
      config = coreConfig(doc);
    } catch (err) {
      this.deps.logger.warn({ c: 'REPL', err: (err as Error).message }, 'A heartbeat brought a config that does not parse; ignored');
      return;
    }
    const selfIndex = config.members.findIndex((m) => this.deps.isSelf(m.host));
    if (this.core === null) {
      if (selfIndex < 0) return;
      this.deps.store.writeConfig(doc);
      this.install(doc, []);
      return;
    }
    this.deps.store.writeConfig(doc);
    this.configDocument = doc;
    this.deps.logger.info({ c: 'REPL', version: config.version, removed: selfIndex < 0 }, 'Installed a newer replica set config from a heartbeat');
    this.step({ type: 'installConfig', config, selfIndex: selfIndex < 0 ? null : selfIndex });
  }

  handleRequestVotes(cmd: Doc): Doc {
    const core = this.requireConfig();
    const request = parseRequestVotes(cmd);
    const from = request.candidateIndex;
    if (!Number.isInteger(from) || from < 0 || from >= core.config.members.length || from === core.selfIndex) {
      return { term: Long.fromNumber(core.term), voteGranted: false, reason: `candidateIndex ${from} is not a member of the config`, ok: 1 };
    }
    const reply = this.step({ type: 'receive', from, message: request }, from);
    if (reply?.kind !== 'replSetRequestVotesResponse') throw new MongoError(ErrorCodes.InternalError, 'vote request not answered');
    return requestVotesReply(reply);
  }

  // The sender is the member of the first position (updatePositionCommand puts its own first).
  handleUpdatePosition(cmd: Doc): Doc {
    const core = this.requireConfig();
    const message = parseUpdatePosition(core.config, cmd);
    if (message.configVersion !== core.config.version) {
      throw new MongoError(ErrorCodes.InvalidReplicaSetConfig, `Received replSetUpdatePosition for node with config version ${message.configVersion}, but our config version is ${core.config.version}`);
    }
    const from = message.optimes[0]?.memberIndex;
    if (from !== undefined && from !== core.selfIndex) this.step({ type: 'receive', from, message });
    return { ok: 1 };
  }

  // --- client commands ---------------------------------------------------------------------

  requireConfig(): TopologyState {
    if (this.core === null) throw new MongoError(ErrorCodes.NotYetInitialized, 'no replset config has been received');
    return this.core;
  }

  // replSetStepDown: a primary steps down once an electable secondary has caught up with it
  // (waiting up to secondaryCatchUpPeriodSecs), and stands for no election for stepDownSecs.
  async stepDown(stepDownSecs: number, catchUpSecs: number, force: boolean): Promise<void> {
    const core = this.requireConfig();
    if (core.role !== 'leader') throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary so can\'t step down');
    const deadline = this.deps.clock.now() + catchUpSecs * 1000;
    while (!force && !this.electableSecondaryCaughtUp()) {
      if (this.deps.clock.now() >= deadline) {
        throw new MongoError(ErrorCodes.ExceededTimeLimit, 'No electable secondaries caught up as of ' + new Date(this.deps.clock.now()).toISOString() + '. Please use the replSetStepDown command with the argument {force: true} to force node to step down.');
      }
      await this.deps.clock.sleep(Math.min(100, Math.max(1, deadline - this.deps.clock.now())));
      if (this.core?.role !== 'leader') throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary so can\'t step down');
    }
    this.step({ type: 'stepDown', frozenUntilMs: this.deps.clock.now() + stepDownSecs * 1000 });
  }

  private electableSecondaryCaughtUp(): boolean {
    const core = this.core;
    if (core === null) return false;
    const mine = lastAppliedOpTime(core);
    const timeoutMs = replSetSettings(core.config).electionTimeoutMillis;
    return core.members.some((m, i) => i !== core.selfIndex && isElectable(core.config.members[i]!) && m.state === 'SECONDARY'
      && isUp(m, core.nowMs, timeoutMs) && compareOpTime(m.appliedOpTime, mine) >= 0);
  }

  // replSetReconfig (MongoDB 4.4's safe reconfig). Without force: only on a writable primary, one at
  // a time, once the current config is committed (waited for until `deadline`, then
  // CurrentConfigNotCommittedYet), the new one checked against the current (src/repl/reconfig.ts),
  // this member electable in it, and a majority of its voters answering a heartbeat; then stored,
  // installed, and waited for until a majority of its voters hold it. With force: from any member
  // with a config, the version raised by a large random amount (so no other config has it) and the
  // term left unset; nothing waited for. A refused config changes nothing.
  async reconfig(raw: Doc, force: boolean, deadline: number | undefined): Promise<void> {
    this.requireConfig();
    if (!force) this.requireWritablePrimary();
    if (this.reconfiguring) throw new MongoError(ErrorCodes.ConfigurationInProgress, 'Cannot run replSetReconfig because the node is currently updating its configuration');
    if (!force) {
      const waited = await this.waitUntil(deadline, (core) => configCommitted(core));
      this.requireWritablePrimary();
      if (!waited) throw new MongoError(ErrorCodes.CurrentConfigNotCommittedYet, 'New config is rejected :: caused by :: operation exceeded time limit');
      if (this.reconfiguring) throw new MongoError(ErrorCodes.ConfigurationInProgress, 'Cannot run replSetReconfig because the node is currently updating its configuration');
    }
    this.reconfiguring = true;
    try {
      const core = this.requireConfig();
      const current = this.configDocument!;
      const givenVersion = typeof raw.version === 'number' || raw.version instanceof Long ? Number(raw.version) : 0;
      const version = force ? Math.max(givenVersion, Number(current.version)) + 10_000 + Math.floor(Math.random() * 100_000) : givenVersion;
      const { document, selfIndex } = checkReconfigConfig(raw, current, { version, term: force ? -1 : core.term }, (h) => this.deps.isSelf(h));
      const config = coreConfig(document);
      const refusal = reconfigRefusal(core.config, config, force);
      if (refusal !== null) throw new MongoError(refusal.code, refusal.message);
      if (!force) {
        const me = config.members[selfIndex]!;
        if (!isElectable(me)) throw new MongoError(ErrorCodes.NodeNotElectable, `This node, ${me.host}, with _id ${me._id} is not electable under the new configuration with {version: ${version}, term: ${core.term}} for replica set ${config._id}`);
        await checkReconfigQuorum(this.deps.network, config, selfIndex, core.term);
        this.requireWritablePrimary();
        if (this.core?.config !== core.config) throw new MongoError(ErrorCodes.ConfigurationInProgress, 'Cannot run replSetReconfig because the node is currently updating its configuration');
      }
      this.deps.store.writeConfig(document);
      this.configDocument = document;
      this.deps.logger.info({ c: 'REPL', config: document, force }, 'replSetReconfig config object parses ok; new config installed');
      this.step({ type: 'installConfig', config, selfIndex });
    } finally {
      this.reconfiguring = false;
    }
    if (force) return;
    if (!(await this.waitUntil(deadline, (core) => configPropagated(core)))) {
      throw new MongoError(ErrorCodes.MaxTimeMSExpired, 'Reconfig finished but failed to propagate to a majority :: caused by :: operation exceeded time limit');
    }
  }

  private requireWritablePrimary(): void {
    if (!this.isWritablePrimary()) {
      throw new MongoError(ErrorCodes.NotWritablePrimary, `Safe reconfig is only allowed on a writable PRIMARY. Current state is ${this.core?.memberState ?? 'STARTUP'}`);
    }
  }

  // Whether `met` held of the core before `deadline` (performance.now()'s clock, maxTimeMS's);
  // without one, waits as long as it takes, as MongoDB does.
  private async waitUntil(deadline: number | undefined, met: (core: TopologyState) => boolean): Promise<boolean> {
    for (;;) {
      const core = this.core;
      if (core !== null && met(core)) return true;
      if (this.stopped) throw new MongoError(ErrorCodes.InterruptedAtShutdown, 'interrupted at shutdown');
      const left = deadline === undefined ? RECONFIG_POLL_MS : deadline - performance.now();
      if (left <= 0) return false;
      await this.deps.clock.sleep(Math.min(RECONFIG_POLL_MS, left));
    }
  }

  // replSetSyncFrom: MongoDB's checks of the member asked for (prepareSyncFromResponse), then the
  // core leaves its source and takes that member next. The reply names the request and the
  // previous source; a member more than 10 s behind us is taken with a warning.
  syncFrom(host: string): Doc {
    const core = this.requireConfig();
    const me = core.config.members[core.selfIndex]!;
    if (me.arbiterOnly) throw new MongoError(ErrorCodes.NotSecondary, 'arbiters don\'t sync');
    if (core.role === 'leader') throw new MongoError(ErrorCodes.NotSecondary, 'primaries don\'t sync');
    const target = core.config.members.findIndex((m) => m.host === host);
    if (target < 0) throw new MongoError(ErrorCodes.NodeNotFound, `Could not find member "${host}" in replica set`);
    if (target === core.selfIndex) throw new MongoError(ErrorCodes.InvalidOptions, 'I cannot sync from myself');
    const wanted = core.config.members[target]!;
    if (wanted.arbiterOnly) throw new MongoError(ErrorCodes.InvalidOptions, `Cannot sync from "${host}" because it is an arbiter`);
    if (isVoter(me) && !isVoter(wanted)) throw new MongoError(ErrorCodes.InvalidOptions, `Cannot sync from "${host}" because it is not a voter`);
    const data = core.members[target]!;
    if (!isUp(data, core.nowMs, replSetSettings(core.config).electionTimeoutMillis)) throw new MongoError(ErrorCodes.HostUnreachable, `I cannot reach the requested member: ${host}`);
    const previous = core.fetch.syncSourceIndex;
    const lagging = data.appliedOpTime.ts + SYNC_FROM_LAG_WARNING_TS < lastAppliedOpTime(core).ts;
    this.step({ type: 'syncFrom', memberIndex: target });
    return {
      syncFromRequested: host,
      ...(lagging ? { warning: `requested member "${host}" is more than 10 seconds behind us` } : {}),
      ...(previous === null ? {} : { prevSyncTarget: core.config.members[previous]!.host }),
    };
  }

  // replSetStepUp (MongoDB's stepUpIfEligible): a secondary stands for election now rather than when
  // its election timeout fires, and answers once the election is over: ok as primary (at once on a
  // primary), CommandFailed otherwise, a member that may not stand included.
  async stepUp(): Promise<void> {
    if (this.requireConfig().role === 'leader') return;
    this.step({ type: 'stepUp' });
    await this.waitUntil(undefined, (core) => core.election === null);
    if (this.core?.role !== 'leader') throw new MongoError(ErrorCodes.CommandFailed, 'Election failed.');
  }

  freeze(secs: number): Doc {
    const core = this.requireConfig();
    if (core.role !== 'follower') throw new MongoError(ErrorCodes.NotSecondary, 'cannot freeze node when primary or running for election. state: Primary');
    this.step({ type: 'freeze', frozenUntilMs: secs === 0 ? 0 : this.deps.clock.now() + secs * 1000 });
    return secs === 0 ? { info: 'unfreezing' } : {};
  }

  status(): Doc {
    const core = this.requireConfig();
    if (core.memberState === 'REMOVED') throw new MongoError(ErrorCodes.InvalidReplicaSetConfig, 'Our replica set config is invalid or we are not a member of it');
    return replSetStatus(core, { nowMs: this.deps.clock.now(), startedAtMs: this.startedAtMs, upSinceMs: this.upSinceMs, electionTime: this.lastElectionTime() });
  }

  rollbackId(): number {
    return this.deps.store.rollbackId();
  }

  // The primary this member knows of, for hello's `primary`.
  primaryHost(): string | undefined {
    if (this.core === null) return undefined;
    const p = primaryIndex(this.core);
    return p === null ? undefined : this.core.config.members[p]!.host;
  }
}
