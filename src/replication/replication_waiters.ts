import type { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { codeNameOf, ErrorCodes } from '../base/error_codes.js';
import type { Clock, Timer } from '../base/clock.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { WRITE_CONCERN_COMMANDS, type ReplicationWaits } from '../command_layer/replication_waits.js';
import { withWriteConcernError } from '../command_layer/unreplicated_write_concern.js';
import { extractWriteConcern, needsOtherMembers, writeConcernToBson, type WriteConcernOptions } from '../command_layer/write_concern_options.js';
import { compareOpTime, type OpTime } from '../repl/op_time.js';
import { isVoter } from '../repl/repl_set_config.js';
import { lastAppliedOpTime, type TopologyState } from '../repl/topology_state.js';
import { writeConcernProblem, writeConcernSatisfied, type MemberOpTimes, type WriteConcernDemand } from '../repl/write_concern.js';
import { errorLabelsFor } from '../sessions/error_labels.js';
import { afterClusterTimeOf } from '../sessions/read_concern_args.js';
import { bsonTimestamp, coreTs } from './op_time_bson.js';

// MongoDB's ReplicationCoordinator waiters for one member: a command's write concern after it ran
// (awaitReplication), and what a read waits for before it runs (waitForReadConcern): a majority
// read reads the commit point's snapshot; an afterClusterTime read on a secondary waits until the
// member has applied that far. Each waiter is checked again whenever the coordinator's core took an
// event (its positions, commit point or state may have moved).

// What the waiters read of the coordinator: its core's state, and a call after every event.
export interface ReplicationProgress {
  state(): TopologyState | null;
  isWritablePrimary(): boolean;
  // What the store holds of the core's oplog, and the commit point within it (a secondary's core
  // takes a fetched batch before its store does).
  storedOpTime(): OpTime | undefined;
  readableCommitPoint(): OpTime | undefined;
  onProgress(listener: () => void): void;
  // A no-op entry written in this primary's term, and its optime; undefined on any other member.
  writeNoop(o: Doc): OpTime | undefined;
}

interface Waiter {
  // Met, or the error that ends the wait; undefined while it goes on.
  check(): 'met' | Doc | undefined;
  settle(outcome: 'met' | Doc): void;
}

// A participant's vote to commit waits too: a prepare a failover took back would leave the
// coordinator's commit decision with nothing to commit on that shard.
const TRANSACTION_ENDS = new Set(['commitTransaction', 'abortTransaction', 'coordinateCommitTransaction', 'prepareTransaction']);
const STEPPED_DOWN = 'Primary stepped down while waiting for replication';

export class ReplicationWaiters implements ReplicationWaits {
  private readonly waiting = new Set<Waiter>();
  private stopped = false;
  // A linearizable read's deadline (maxTimeMS from when its wait began), by its command.
  private readonly linearizableDeadlines = new WeakMap<Doc, number | undefined>();

  constructor(private readonly coordinator: ReplicationProgress, private readonly clock: Clock) {
    coordinator.onProgress(() => this.checkAll());
  }

  // Shutdown ends every wait with ShutdownInProgress.
  stop(): void {
    this.stopped = true;
    for (const w of [...this.waiting]) w.settle(concernError(ErrorCodes.ShutdownInProgress, 'Replication is being shut down', undefined));
  }

  checkWriteConcern(commandName: string, cmd: Doc): void {
    if (waitsForWriteConcern(commandName, cmd)) extractWriteConcern(cmd, this.defaultWriteConcern());
  }

  // MongoDB 5.0's implicit default: w: 'majority', unless arbiters make a majority of voters
  // something the data-bearing voters alone may not reach (a PSA set), then w: 1.
  private defaultWriteConcern(): WriteConcernOptions {
    const core = this.coordinator.state();
    const members = core?.config.members ?? [];
    const voters = members.filter(isVoter);
    const arbiters = voters.filter((m) => m.arbiterOnly).length;
    const majority = Math.floor(voters.length / 2) + 1;
    const w = arbiters > 0 && voters.length - arbiters <= majority ? 1 : 'majority';
    return { w, sync: 'unset', wtimeout: 0, provenance: 'implicitDefault' };
  }

  afterCommand(commandName: string, cmd: Doc, reply: Doc, lastOp: { ts: Timestamp | undefined; term: number | undefined }): Doc | Promise<Doc> {
    if (this.linearizableDeadlines.has(cmd)) return reply.ok === 1 ? this.confirmLinearizable(reply, this.linearizableDeadlines.get(cmd)) : reply;
    if (!waitsForWriteConcern(commandName, cmd) || reply.ok !== 1) return reply;
    const wc = isConfigServerCommand(commandName) ? CATALOG_WRITE_CONCERN : extractWriteConcern(cmd, this.defaultWriteConcern());
    if (!needsOtherMembers(wc)) return reply;
    const core = this.coordinator.state();
    if (core === null) return reply;
    const demand: WriteConcernDemand = { w: wc.w, j: wc.sync === 'journal' || wc.w === 'majority' };
    const problem = writeConcernProblem(core.config, demand);
    const labelled = (error: Doc): Doc => withLabels(commandName, cmd, withWriteConcernError(cmd, reply, error), error.code as number);
    if (problem !== null) return labelled(concernError(problem.code, problem.errmsg, wc));
    const wait = (): Doc | Promise<Doc> => this.awaitReplication(wc, demand, reply, labelled, lastOp);
    // A catalog command writes after its awaits, where no lastOp records the write: it waits for
    // what the member has written once the coordinator has taken in its own writes (it does on the
    // next turn of the event loop, localWritesCommitted).
    if (lastOp.ts === undefined && isConfigServerCommand(commandName)) return new Promise<void>((resolve) => setImmediate(resolve)).then(wait);
    return wait();
  }

  async awaitMajority(): Promise<void> {
    // The coordinator takes in the member's own writes on the next turn of the event loop.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const failed = (error: Doc): Doc => ({ ok: 1, writeConcernError: error });
    const reply = await this.awaitReplication(CATALOG_WRITE_CONCERN, { w: 'majority', j: true }, { ok: 1 }, failed, { ts: undefined, term: undefined });
    const error = reply.writeConcernError as Doc | undefined;
    if (error !== undefined) throw new MongoError(error.code as number, String(error.errmsg));
  }

  private awaitReplication(wc: WriteConcernOptions, demand: WriteConcernDemand, reply: Doc, labelled: (error: Doc) => Doc, lastOp: { ts: Timestamp | undefined; term: number | undefined }): Doc | Promise<Doc> {
    const core = this.coordinator.state();
    if (core === null) return reply;
    // A command that wrote nothing waits for what the member had written before it (the client's
    // earlier writes are at or before it), as MongoDB waits for the system's last optime.
    const opTime: OpTime = lastOp.ts === undefined ? lastAppliedOpTime(core) : { ts: coreTs(lastOp.ts), t: lastOp.term ?? core.term };
    const term = core.term;
    return new Promise<Doc>((resolve) => {
      let timer: Timer | undefined;
      const waiter: Waiter = {
        check: () => {
          const now = this.coordinator.state();
          if (now === null || now.role !== 'leader' || now.term !== term) return concernError(ErrorCodes.PrimarySteppedDown, STEPPED_DOWN, wc);
          return writeConcernSatisfied(now.config, memberOpTimes(now), now.lastCommittedOpTime, opTime, demand) ? 'met' : undefined;
        },
        settle: (outcome) => {
          this.waiting.delete(waiter);
          timer?.cancel();
          resolve(outcome === 'met' ? reply : labelled(outcome));
        },
      };
      const first = this.stopped ? concernError(ErrorCodes.ShutdownInProgress, 'Replication is being shut down', wc) : waiter.check();
      if (first !== undefined) {
        waiter.settle(first);
        return;
      }
      this.waiting.add(waiter);
      if (wc.wtimeout > 0) {
        timer = this.clock.setTimer(wc.wtimeout, () => waiter.settle({ ...concernError(ErrorCodes.WriteConcernFailed, 'waiting for replication timed out', wc), errInfo: { wtimeout: true, writeConcern: writeConcernToBson(wc) } }), { unref: true });
      }
    });
  }

  beforeRead(commandName: string, cmd: Doc): { wait: Promise<void> | undefined; readAt: (() => Timestamp) | undefined } | undefined {
    if (cmd.autocommit === false || commandName === 'getMore') return undefined;
    const rc = cmd.readConcern;
    const level = isPlainObject(rc) && typeof rc.level === 'string' ? rc.level : 'local';
    const after = afterClusterTimeOf(rc);
    if (level === 'linearizable') {
      if (!this.coordinator.isWritablePrimary()) throw new MongoError(ErrorCodes.NotWritablePrimary, 'cannot satisfy linearizable read concern on non-primary node');
      const maxTimeMS = typeof cmd.maxTimeMS === 'number' && cmd.maxTimeMS > 0 ? cmd.maxTimeMS : undefined;
      this.linearizableDeadlines.set(cmd, maxTimeMS === undefined ? undefined : performance.now() + maxTimeMS);
      return undefined;
    }
    if (level === 'majority') {
      const wait = this.until((core) => committedInOwnTerm(core) && (after === undefined || this.readableCommitTs() >= coreTs(after)));
      return { wait, readAt: () => this.committedSnapshot() };
    }
    if (after === undefined || this.coordinator.isWritablePrimary()) return undefined;
    // A secondary serves a causally consistent read once it has applied up to the time.
    return { wait: this.until(() => (this.coordinator.storedOpTime()?.ts ?? 0) >= coreTs(after)), readAt: undefined };
  }

  // A primary cut off from the others (or one deposed and not told yet) never gets there: what it
  // wrote at or before `at` may be rolled back, and what its successor committed is not on it.
  beforeSnapshotRead(at: Timestamp): Promise<void> | undefined {
    const target = coreTs(at);
    const core = this.coordinator.state();
    if (core !== null && lastAppliedOpTime(core).ts < target) this.coordinator.writeNoop({ msg: 'snapshot read' });
    return this.until((now) => committedInOwnTerm(now) && this.readableCommitTs() >= target);
  }

  private readableCommitTs(): number {
    return this.coordinator.readableCommitPoint()?.ts ?? 0;
  }

  // MongoDB's waitForLinearizableReadConcern: after the read, a no-op in this primary's term,
  // answered only once a majority holds it. A primary deposed without knowing it cannot commit
  // one, so what it read is never answered as current: the reply waits until the read's maxTimeMS
  // (MaxTimeMSExpired) or until it learns of its step-down (PrimarySteppedDown).
  private confirmLinearizable(reply: Doc, deadline: number | undefined): Doc | Promise<Doc> {
    const opTime = this.coordinator.writeNoop({ msg: 'linearizable read' });
    const term = this.coordinator.state()?.term;
    if (opTime === undefined) return errorDoc(ErrorCodes.NotWritablePrimary, 'No longer primary when waiting for linearizable read concern');
    return new Promise<Doc>((resolve) => {
      let timer: Timer | undefined;
      const waiter: Waiter = {
        check: () => {
          const now = this.coordinator.state();
          if (now === null || now.role !== 'leader' || now.term !== term) return errorDoc(ErrorCodes.PrimarySteppedDown, STEPPED_DOWN);
          return compareOpTime(now.lastCommittedOpTime, opTime) >= 0 ? 'met' : undefined;
        },
        settle: (outcome) => {
          this.waiting.delete(waiter);
          timer?.cancel();
          resolve(outcome === 'met' ? reply : outcome);
        },
      };
      const first = this.stopped ? errorDoc(ErrorCodes.ShutdownInProgress, 'Replication is being shut down') : waiter.check();
      if (first !== undefined) {
        waiter.settle(first);
        return;
      }
      this.waiting.add(waiter);
      if (deadline !== undefined) timer = this.clock.setTimer(Math.max(0, deadline - performance.now()), () => waiter.settle(errorDoc(ErrorCodes.MaxTimeMSExpired, 'operation exceeded time limit')), { unref: true });
    });
  }

  // The time a majority read reads at: the member's commit point as far as its store holds it, once
  // it has one.
  private committedSnapshot(): Timestamp {
    const committed = this.coordinator.readableCommitPoint();
    if (committed === undefined || committed.ts <= 0) throw new MongoError(ErrorCodes.ReadConcernMajorityNotAvailableYet, 'Read concern majority reads are currently not possible.');
    return bsonTimestamp(committed.ts);
  }

  private until(met: (core: TopologyState) => boolean): Promise<void> | undefined {
    const core = this.coordinator.state();
    if (core !== null && met(core)) return undefined;
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        check: () => {
          const now = this.coordinator.state();
          return now !== null && met(now) ? 'met' : undefined;
        },
        settle: () => {
          this.waiting.delete(waiter);
          resolve();
        },
      };
      this.waiting.add(waiter);
    });
  }

  private checkAll(): void {
    for (const w of [...this.waiting]) {
      const outcome = w.check();
      if (outcome !== undefined) w.settle(outcome);
    }
  }
}

// A config server's catalog commands answer once their writes are majority-committed, whatever
// the caller asked (MongoDB's _configsvr* commands run only with w: 'majority'): a catalog change
// a router or shard was told of survives the config server's failover.
const CATALOG_WRITE_CONCERN: WriteConcernOptions = { w: 'majority', sync: 'unset', wtimeout: 0, provenance: 'internalWriteDefault' };

function isConfigServerCommand(commandName: string): boolean {
  return commandName.startsWith('_configsvr');
}

function waitsForWriteConcern(commandName: string, cmd: Doc): boolean {
  if (isConfigServerCommand(commandName)) return true;
  if (!WRITE_CONCERN_COMMANDS.has(commandName)) return false;
  // A transaction's statements wait for nothing: its commit or abort does.
  return cmd.autocommit !== false || TRANSACTION_ENDS.has(commandName);
}

// Beyond MongoDB: a new primary serves majority reads only once an entry of its own term is
// committed (Raft's rule for a leader's reads). Until then its commit point may lag what its
// predecessor committed and acknowledged, so a client (a router refreshing its catalog from a
// config server that just failed over) would read a catalog older than one it was told of.
// MongoDB closes that gap with afterOpTime on every catalog read; this closes it for every reader.
function committedInOwnTerm(core: TopologyState): boolean {
  if (core.role !== 'leader' || core.leader === null) return true;
  const first = core.leader.firstOpTimeOfMyTerm;
  return first !== null && compareOpTime(core.lastCommittedOpTime, first) >= 0;
}

// Where each member is, by member index: this member's own position from its oplog.
function memberOpTimes(core: TopologyState): MemberOpTimes[] {
  const mine = lastAppliedOpTime(core);
  return core.members.map((m, i) => (i === core.selfIndex ? { appliedOpTime: mine, durableOpTime: mine } : { appliedOpTime: m.appliedOpTime, durableOpTime: m.durableOpTime }));
}

function errorDoc(code: number, errmsg: string): Doc {
  return { ok: 0, errmsg, code, codeName: codeNameOf(code) };
}

function concernError(code: number, errmsg: string, wc: WriteConcernOptions | undefined): Doc {
  return { code, codeName: codeNameOf(code), errmsg, ...(wc === undefined ? {} : { errInfo: { writeConcern: writeConcernToBson(wc) } }) };
}

// A retryable write or a transaction's commit whose write concern failed retriably says so.
function withLabels(commandName: string, cmd: Doc, reply: Doc, writeConcernCode: number): Doc {
  if (reply.writeConcernError === undefined) return reply;
  const labels = errorLabelsFor(commandName, cmd, undefined, writeConcernCode, true);
  return labels.length === 0 ? reply : { ...reply, errorLabels: [...new Set([...((reply.errorLabels as string[] | undefined) ?? []), ...labels])] };
}
