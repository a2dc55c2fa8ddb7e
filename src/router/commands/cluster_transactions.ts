import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { noTransactionToEnd } from '../../sessions/operation_session_info.js';
import { errorLabelsFor } from '../../sessions/error_labels.js';
import type { RouterCommand, RouterContext, RouterServices } from '../router_services.js';
import { commitPlan, withRouterTransaction, type RouterTransaction } from '../transaction_router.js';
import { sendToShard } from '../versioned_request.js';

// A statement of a transaction through the router (transaction_router.ts): it runs with every
// request it sends a shard made a statement of the transaction; its reply carries the
// recoveryToken (the shard a commit through another router asks); if it fails, or a write answers
// a write error, the transaction is aborted on every participant, and a failure the whole
// transaction may get past when run again fails the command (a write error of that kind too) with
// TransientTransactionError.
export async function runRouterTransactionStatement(ctx: RouterContext, name: string, cmd: Doc, body: () => Doc | Promise<Doc>): Promise<Doc> {
  const { router } = ctx;
  let begun: ReturnType<typeof router.transactions.statement>;
  try {
    begun = router.transactions.statement(cmd, name, ctx.db, () => router.clock.now());
  } catch (err) {
    throw labelled(name, cmd, err);
  }
  const { txn, replaced } = begun;
  if (replaced !== undefined) await abortParticipants(router, replaced);
  let reply: Doc;
  try {
    reply = await withRouterTransaction(txn, body);
  } catch (err) {
    await abortParticipants(router, txn);
    throw labelled(name, cmd, err);
  }
  if (reply.ok !== 1) {
    await abortParticipants(router, txn);
    return withLabels(name, cmd, reply);
  }
  const writeErrors = reply.writeErrors;
  if (Array.isArray(writeErrors) && writeErrors.length > 0) {
    await abortParticipants(router, txn);
    const transient = (writeErrors as Doc[]).find((e) => errorLabelsFor(name, cmd, e.code as number, undefined, false).includes('TransientTransactionError'));
    if (transient !== undefined) throw labelled(name, cmd, new MongoError(transient.code as number, String(transient.errmsg)));
  }
  return withRecoveryToken(reply, txn);
}

// commitTransaction, as commitPlan decides. A router that did not run the transaction asks the
// shard its recoveryToken names for the decision (coordinateCommitTransaction with no
// participants, as mongos recovers it): committed is ok, a prepared one answers with its decision,
// one still in progress is aborted there, never committed.
export const clusterCommitTransactionCommand: RouterCommand = {
  names: ['commitTransaction'],
  adminOnly: true,
  async run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('commitTransaction');
    const { router } = ctx;
    const txn = router.transactions.find(cmd);
    if (txn === undefined) return recoverCommit(router, cmd);
    if (txn.phase === 'aborted') throw labelled('commitTransaction', cmd, new MongoError(ErrorCodes.NoSuchTransaction, `Transaction with { txnNumber: ${txn.txnNum} } has been aborted.`));
    let writeConcernError: Doc | undefined;
    try {
      writeConcernError = await commit(router, txn, isPlainObject(cmd.writeConcern) ? cmd.writeConcern : undefined);
    } catch (err) {
      throw labelled('commitTransaction', cmd, err);
    }
    return withRecoveryToken(writeConcernError === undefined ? { ok: 1 } : { ok: 1, writeConcernError }, txn);
  },
};

// The client's write concern goes with each shard's commitTransaction, or with the coordinator's
// coordinateCommitTransaction, as mongos sends it, and the first writeConcernError a shard answers
// is the commit's: the commit is done, but not as replicated as asked.
async function commit(router: RouterServices, txn: RouterTransaction, writeConcern?: Doc): Promise<Doc | undefined> {
  const plan = commitPlan(txn);
  const errors: Doc[] = [];
  const commitOn = async (shard: string): Promise<void> => {
    const writeConcernError = await endOn(router, txn, shard, 'commitTransaction', writeConcern);
    if (writeConcernError !== undefined) errors.push(writeConcernError);
  };
  if (plan.type === 'direct') {
    await Promise.all(plan.readOnly.map(commitOn));
    if (plan.writer !== undefined) await commitOn(plan.writer);
  } else if (plan.type === 'twoPhase') {
    const writeConcernError = await coordinateCommit(router, txn, plan.coordinator, plan.participants, writeConcern);
    if (writeConcernError !== undefined) errors.push(writeConcernError);
  }
  txn.phase = 'committed';
  return errors[0];
}

// Runs `body` as a transaction under a retryable write's lsid and txnNumber, and commits it (a
// router's move of a document to another shard: cluster_write.ts changeOwningShard). Aborted on
// every participant if anything fails.
export async function runAsTransaction(ctx: RouterContext, cmd: Doc, body: () => Promise<void>): Promise<void> {
  const { router } = ctx;
  const { txn, replaced } = router.transactions.statement({ lsid: cmd.lsid, txnNumber: cmd.txnNumber, autocommit: false, startTransaction: true }, 'update', ctx.db, () => router.clock.now());
  if (replaced !== undefined) await abortParticipants(router, replaced);
  try {
    await withRouterTransaction(txn, body);
    await commit(router, txn);
  } catch (err) {
    await abortParticipants(router, txn);
    throw err;
  }
}

// A coordinator's abort decision ends the transaction here too: a later commitTransaction answers
// NoSuchTransaction at once, and abortTransaction has nothing left to tell the shards.
// The coordinator's writeConcernError, if it answered one.
async function coordinateCommit(router: RouterServices, txn: RouterTransaction, coordinator: string, participants: string[], writeConcern?: Doc): Promise<Doc | undefined> {
  txn.coordinating = true;
  const command = { coordinateCommitTransaction: 1, participants: participants.map((shardId) => ({ shardId })), ...(writeConcern === undefined ? {} : { writeConcern }) };
  const reply = await sendToShard(router, coordinator, 'admin', txn.sessionFields(command));
  if (reply.ok === 1) return isPlainObject(reply.writeConcernError) ? reply.writeConcernError : undefined;
  if (reply.code === ErrorCodes.NoSuchTransaction) txn.phase = 'aborted';
  throw new MongoError(typeof reply.code === 'number' ? reply.code : ErrorCodes.InternalError, String(reply.errmsg), {}, Array.isArray(reply.errorLabels) ? reply.errorLabels.map(String) : []);
}

export const clusterAbortTransactionCommand: RouterCommand = {
  names: ['abortTransaction'],
  adminOnly: true,
  async run(ctx, cmd) {
    if (cmd.autocommit !== false) throw noTransactionToEnd('abortTransaction');
    const txn = ctx.router.transactions.find(cmd);
    if (txn === undefined) throw new MongoError(ErrorCodes.NoSuchTransaction, 'Given transaction number does not match any in-progress transactions');
    if (txn.phase === 'committed') throw new MongoError(ErrorCodes.TransactionCommitted, `Transaction with { txnNumber: ${txn.txnNum} } has been committed.`);
    await abortParticipants(ctx.router, txn);
    return { ok: 1 };
  },
};

async function recoverCommit(router: RouterServices, cmd: Doc): Promise<Doc> {
  const token = cmd.recoveryToken;
  const shard = isPlainObject(token) && typeof token.recoveryShardId === 'string' ? token.recoveryShardId : undefined;
  if (shard === undefined) throw labelled('commitTransaction', cmd, new MongoError(ErrorCodes.NoSuchTransaction, 'Cannot commit a transaction this router did not run without a recoveryToken'));
  const reply = await sendToShard(router, shard, 'admin', { coordinateCommitTransaction: 1, participants: [], lsid: cmd.lsid, txnNumber: cmd.txnNumber, autocommit: false });
  if (reply.ok === 1) return { ok: 1 };
  throw labelled('commitTransaction', cmd, new MongoError(typeof reply.code === 'number' ? reply.code : ErrorCodes.InternalError, String(reply.errmsg)));
}

// The shard's writeConcernError, if it answered one.
async function endOn(router: RouterServices, txn: RouterTransaction, shard: string, command: 'commitTransaction' | 'abortTransaction', writeConcern?: Doc): Promise<Doc | undefined> {
  const reply = await sendToShard(router, shard, 'admin', txn.sessionFields({ [command]: 1, ...(writeConcern === undefined ? {} : { writeConcern }) }));
  if (reply.ok === 1) return isPlainObject(reply.writeConcernError) ? reply.writeConcernError : undefined;
  throw new MongoError(typeof reply.code === 'number' ? reply.code : ErrorCodes.InternalError, String(reply.errmsg), {}, Array.isArray(reply.errorLabels) ? reply.errorLabels.map(String) : []);
}

// Every participant is told; one that cannot be reached aborts its part when it expires.
async function abortParticipants(router: RouterServices, txn: RouterTransaction): Promise<void> {
  if (txn.phase !== 'inProgress' || txn.coordinating) return;
  txn.phase = 'aborted';
  await Promise.all([...txn.participants.keys()].map((shard) => endOn(router, txn, shard, 'abortTransaction').catch(() => undefined)));
}

function withRecoveryToken(reply: Doc, txn: RouterTransaction): Doc {
  const shard = txn.recoveryShard();
  return shard === undefined ? reply : { ...reply, recoveryToken: { recoveryShardId: shard } };
}

function labelled(name: string, cmd: Doc, err: unknown): unknown {
  if (!(err instanceof MongoError)) return err;
  const labels = [...new Set([...err.errorLabels, ...errorLabelsFor(name, cmd, err.code, undefined, false)])];
  return new MongoError(err.code, err.message, err.extra, labels);
}

function withLabels(name: string, cmd: Doc, reply: Doc): Doc {
  const labels = errorLabelsFor(name, cmd, typeof reply.code === 'number' ? reply.code : undefined, undefined, false);
  if (labels.length === 0) return reply;
  const had = Array.isArray(reply.errorLabels) ? reply.errorLabels.map(String) : [];
  return { ...reply, errorLabels: [...new Set([...had, ...labels])] };
}
