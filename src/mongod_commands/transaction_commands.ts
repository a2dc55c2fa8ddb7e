import { deserializeDocument, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { hangIfFailPointEnabled } from '../base/fail_points.js';
import type { CommandDefinition, MongodServices } from './command.js';
import { noTransactionToEnd } from '../sessions/operation_session_info.js';
import { withReadView, type ReadView } from '../command_layer/read_view.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { errorLabelsFor } from '../sessions/error_labels.js';

// A statement of a multi-document transaction (autocommit: false) runs in the session's
// transaction (sessions/transaction_participant.ts): its reads see the transaction's snapshot and
// own writes, its writes go to the transaction's write set, and a cursor it opens reads the same
// way until the transaction ends. A statement that fails aborts the transaction (the dispatcher's
// failure path), a write with a write error too, as mongod's write path does in a transaction; a
// write error after which the whole transaction may succeed again (WriteConflict) fails the
// command instead, so that its reply carries the TransientTransactionError label.
export function runTransactionStatement(node: MongodServices, name: string, db: string, cmd: Doc, body: () => Doc | Promise<Doc>): Doc | Promise<Doc> {
  if (name === 'commitTransaction' || name === 'abortTransaction' || name === 'coordinateCommitTransaction' || name === 'prepareTransaction') return body();
  const txn = node.transactions.statement(cmd, name, db);
  const view: ReadView = {
    run: (fn) => node.storage.kv.withView(txn.writeSet, fn),
    // The transaction owns its snapshot and lets it go when it ends.
    adopt: () => () => undefined,
  };
  const reply = txn.statement(() => withReadView(view, body));
  return reply instanceof Promise ? reply.then((r) => afterWrite(node, name, cmd, r)) : afterWrite(node, name, cmd, reply);
}

function afterWrite(node: MongodServices, name: string, cmd: Doc, reply: Doc): Doc {
  const errors = reply.writeErrors;
  if (!Array.isArray(errors) || errors.length === 0) return reply;
  // The router moves the document in this same transaction: nothing failed.
  if ((errors as Doc[]).every((e) => e.code === ErrorCodes.WouldChangeOwningShard)) return reply;
  const transient = (errors as Doc[]).find((e) => errorLabelsFor(name, cmd, e.code as number, undefined, false).includes('TransientTransactionError'));
  if (transient !== undefined) throw new MongoError(transient.code as number, String(transient.errmsg));
  node.transactions.statementFailed(cmd);
  return reply;
}

// A commit is a write to every collection the transaction wrote: it waits for a migration's
// critical section on one, as a write does, and refuses (StaleConfig, a transient error) documents
// in a range the shard no longer owns, which a migration committed since the transaction wrote
// them: applied here they would be orphans, lost to the collection. A prepare checks the same, and
// from then on a migration's critical section waits for the decision (preparedOn) and the commit of
// a prepared transaction waits for nothing: it may not fail. What the shard owns must be known for
// that check: right after a migration's commit, or on a new primary, it is loaded first.
function afterCriticalSections<T>(node: MongodServices, cmd: Doc, fn: () => T): T | Promise<T> {
  const { criticalSection, metadata } = node.sharding;
  const written = node.transactions.writtenNamespaces(cmd);
  const waits = [
    ...written.filter((ns) => criticalSection.isHeld(ns)).map((ns) => criticalSection.waitFor(ns, 'write')),
    ...written.map((ns) => metadata.whenLoaded(ns)).filter((w) => w !== undefined),
  ];
  if (waits.length === 0) return fn();
  return Promise.all(waits).then(fn);
}

export const commitTransactionCommand: CommandDefinition = {
  names: ['commitTransaction'],
  adminOnly: true,
  async run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('commitTransaction');
    const { node } = ctx;
    if (node.transactions.phaseOf(cmd) === 'prepared') {
      await hangIfFailPointEnabled(node, 'hangBeforeCommittingPreparedTransaction', node.wallClock);
      node.transactions.commit(cmd);
      return { ok: 1 };
    }
    return afterCriticalSections(node, cmd, () => {
      node.transactions.commit(cmd, (ns, bytes) => checkOwned(node, ns, bytes));
      return { ok: 1 };
    });
  },
};

// The first phase of a two-phase commit, sent by the transaction's coordinator.
export const prepareTransactionCommand: CommandDefinition = {
  names: ['prepareTransaction'],
  adminOnly: true,
  async run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('prepareTransaction');
    const { node } = ctx;
    const prepareTimestamp = await afterCriticalSections(node, cmd, () => node.transactions.prepare(cmd, (ns, bytes) => checkOwned(node, ns, bytes)));
    await node.storage.flushed();
    await hangIfFailPointEnabled(node, 'hangAfterPreparingTransaction', node.wallClock);
    return { prepareTimestamp, ok: 1 };
  },
};

function checkOwned(node: MongodServices, ns: string, bytes: Buffer): void {
  const may = node.sharding.metadata.mayWrite(ns, () => deserializeDocument(bytes));
  if (may === true) return;
  if (may === 'unknown') throw new MongoError(ErrorCodes.StaleConfig, `Transaction wrote to ${ns}, whose ownership this shard could not load: it may have been migrated since`);
  throw new MongoError(ErrorCodes.StaleConfig, `Transaction wrote to ${ns} in a range this shard no longer owns: a migration committed since`);
}

// coordinateCommitTransaction: with participants, the router's request to run the two-phase commit
// (transaction_coordinator_service.ts), answered with the decision; a retry joins the coordinator
// running, and one for a transaction this shard already committed answers ok. Without
// participants, a router's recovery of the decision from its recoveryToken's shard.
export const coordinateCommitTransactionCommand: CommandDefinition = {
  names: ['coordinateCommitTransaction'],
  adminOnly: true,
  async run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('commitTransaction');
    const { node } = ctx;
    const participants = Array.isArray(cmd.participants) ? cmd.participants.map(participantShardId) : [];
    const txnNumber = toDouble(cmd.txnNumber as number);
    const running = node.transactionCoordinators.joined(cmd.lsid as Doc, txnNumber);
    if (running === undefined) {
      const phase = node.transactions.phaseOf(cmd);
      if (participants.length === 0 || phase === 'committed' || phase === 'aborted') {
        await node.transactions.recoverDecision(cmd);
        return { ok: 1 };
      }
    }
    const decision = await (running ?? node.transactionCoordinators.coordinateCommit(cmd.lsid as Doc, txnNumber, participants));
    if (decision.decision === 'abort') throw new MongoError(decision.abortStatus.code, decision.abortStatus.errmsg);
    return { ok: 1 };
  },
};

function participantShardId(p: unknown): string {
  if (!isPlainObject(p) || typeof p.shardId !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'coordinateCommitTransaction.participants.shardId' is missing or not a string");
  return p.shardId;
}

export const abortTransactionCommand: CommandDefinition = {
  names: ['abortTransaction'],
  adminOnly: true,
  run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('abortTransaction');
    ctx.node.transactions.abort(cmd);
    return { ok: 1 };
  },
};
