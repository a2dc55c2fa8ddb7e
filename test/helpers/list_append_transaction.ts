import { MongoServerError, type Collection, type MongoClient, type TransactionOptions } from 'mongodb';
import type { Key, MicroOp, Outcome, Transaction } from './list_append_checker.js';
import type { AnyDoc } from './spawn_node.js';

// Runs one list-append transaction (its reads find the key's document, its appends $push to it)
// and gives it as the checker's history takes it. A commit whose reply was lost, or that failed
// with a label saying its outcome is unknown, is `info`; any other failure is `failed`, and then
// what it read is unknown while its appends stay in the history (G1a).
export async function runListAppendTransaction(
  client: MongoClient,
  lists: Collection<AnyDoc>,
  ops: readonly MicroOp[],
  docId: (key: Key) => unknown,
  options?: TransactionOptions,
): Promise<Transaction> {
  const done: MicroOp[] = [];
  const session = client.startSession();
  let outcome: Outcome = 'failed';
  try {
    session.startTransaction(options);
    for (const op of ops) {
      if (op[0] === 'r') {
        const doc = await lists.findOne({ _id: docId(op[1]) }, { session });
        done.push(['r', op[1], (doc?.v as number[] | undefined) ?? null]);
      } else {
        await lists.updateOne({ _id: docId(op[1]) }, { $push: { v: op[2] } } as AnyDoc, { session, upsert: true });
        done.push(op);
      }
    }
    try {
      await session.commitTransaction();
      outcome = 'ok';
    } catch (err) {
      outcome = err instanceof MongoServerError && !err.hasErrorLabel('UnknownTransactionCommitResult') && !err.hasErrorLabel('RetryableWriteError') ? 'failed' : 'info';
    }
  } catch {
    await session.abortTransaction().catch(() => undefined);
  } finally {
    await session.endSession().catch(() => undefined);
  }
  return { outcome, ops: outcome === 'ok' ? done : ops.map((op) => (op[0] === 'r' ? ['r', op[1], null] : op)) };
}
