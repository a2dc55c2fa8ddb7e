import { deserializeDocument, type Doc } from '../bson/values.js';
import type { CommandDefinition, NodeServices } from './command.js';
import { noTransactionToEnd } from '../sessions/operation_session_info.js';
import { withReadView, type ReadView } from './read_view.js';
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
export function runTransactionStatement(node: NodeServices, name: string, db: string, cmd: Doc, body: () => Doc | Promise<Doc>): Doc | Promise<Doc> {
  if (name === 'commitTransaction' || name === 'abortTransaction' || name === 'coordinateCommitTransaction') return body();
  const txn = node.transactions.statement(cmd, name, db);
  const view: ReadView = {
    run: (fn) => node.storage.kv.withView(txn.writeSet, fn),
    // The transaction owns its snapshot and lets it go when it ends.
    adopt: () => () => undefined,
  };
  const reply = txn.statement(() => withReadView(view, body));
  return reply instanceof Promise ? reply.then((r) => afterWrite(node, name, cmd, r)) : afterWrite(node, name, cmd, reply);
}

function afterWrite(node: NodeServices, name: string, cmd: Doc, reply: Doc): Doc {
  const errors = reply.writeErrors;
  if (!Array.isArray(errors) || errors.length === 0) return reply;
  const transient = (errors as Doc[]).find((e) => errorLabelsFor(name, cmd, e.code as number, undefined, false).includes('TransientTransactionError'));
  if (transient !== undefined) throw new MongoError(transient.code as number, String(transient.errmsg));
  node.transactions.statementFailed(cmd);
  return reply;
}

// A commit is a write to every collection the transaction wrote: it waits for a migration's
// critical section on one, as a write does, and refuses (StaleConfig, a transient error) documents
// in a range the shard no longer owns, which a migration committed since the transaction wrote
// them: applied here they would be orphans, lost to the collection.
export const commitTransactionCommand: CommandDefinition = {
  names: ['commitTransaction'],
  adminOnly: true,
  run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('commitTransaction');
    const { node } = ctx;
    const held = node.transactions.writtenNamespaces(cmd).filter((ns) => node.migrations.criticalSection.isHeld(ns));
    const commit = (): Doc => {
      node.transactions.commit(cmd, (ns, bytes) => checkOwned(node, ns, bytes));
      return { ok: 1 };
    };
    if (held.length === 0) return commit();
    return Promise.all(held.map((ns) => node.migrations.criticalSection.waitFor(ns, 'write'))).then(commit);
  },
};

function checkOwned(node: NodeServices, ns: string, bytes: Buffer): void {
  const ownership = node.sharding.metadata.ownership(ns);
  if (ownership === undefined || ownership.ownsEverything() || ownership.ownsDocument(deserializeDocument(bytes))) return;
  throw new MongoError(ErrorCodes.StaleConfig, `Transaction wrote to ${ns} in a range this shard no longer owns: a migration committed since`);
}

// A router's recovery of a transaction's decision from its recoveryToken's shard (participants: []).
// Two-phase commit, with participants, is not there yet.
export const coordinateCommitTransactionCommand: CommandDefinition = {
  names: ['coordinateCommitTransaction'],
  adminOnly: true,
  run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('commitTransaction');
    if (Array.isArray(cmd.participants) && cmd.participants.length > 0) {
      throw new MongoError(ErrorCodes.OperationNotSupportedInTransaction, 'coordinateCommitTransaction with participants needs a two-phase commit, which docshard does not have yet');
    }
    ctx.node.transactions.recoverDecision(cmd);
    return { ok: 1 };
  },
};

export const abortTransactionCommand: CommandDefinition = {
  names: ['abortTransaction'],
  adminOnly: true,
  run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('abortTransaction');
    ctx.node.transactions.abort(cmd);
    return { ok: 1 };
  },
};
