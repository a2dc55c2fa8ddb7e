import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, toDouble, type Doc } from '../../bson/values.js';
import { statementIds } from '../../sessions/retryable_write.js';
import type { RetryableWriteRun } from '../../sessions/session_catalog.js';
import { sessionIdOf } from '../../sessions/session_id.js';
import type { WriteUnit } from '../../storage/storage_engine.js';
import type { StoredDocument } from '../../storage/op_observer.js';
import type { CommandContext } from '../command.js';
import { withTransactionalWriteFailPoint } from './transactional_write_fail_point.js';

// A write command's retryable part, when it carries a txnNumber (its lsid is checked by the
// dispatcher): the session's run in this write unit, and the id of each statement.
export interface RetryableStatements {
  readonly run: RetryableWriteRun;
  readonly stmtIds: readonly number[];
  // The shard key of a document the command writes, when the shard knows the collection's key.
  keyOf(doc: Doc): Doc | undefined;
  keyOfStored(doc: StoredDocument): Doc | undefined;
}

export function retryableStatements(ctx: CommandContext, unit: WriteUnit, cmd: Doc, ns: string, count: number): RetryableStatements | undefined {
  if (cmd.txnNumber === undefined || cmd.autocommit === false) return undefined;
  const txnNumber = isNumber(cmd.txnNumber) ? toDouble(cmd.txnNumber) : NaN;
  const pattern = ctx.node.sharding.metadata.ownership(ns)?.pattern;
  return {
    run: withTransactionalWriteFailPoint(ctx, ctx.node.sessionCatalog.begin(unit, sessionIdOf(cmd.lsid), txnNumber, ns)),
    stmtIds: statementIds(cmd, count),
    keyOf: (doc) => pattern?.extractShardKeyFromDoc(doc),
    keyOfStored: (doc) => pattern?.extractShardKeyFromDoc(doc.fields(pattern.fields)),
  };
}

// A statement that would write an unbounded number of documents cannot be retried exactly once.
export function refuseUnretryable(cmd: Doc, what: 'multi=true' | 'limit=0'): void {
  if (cmd.txnNumber !== undefined && cmd.autocommit === undefined) throw new MongoError(ErrorCodes.InvalidOptions, `Cannot use (or request) retryable writes with ${what}`);
}

// MongoDB adds the ids of the statements it did not run again.
export function withRetriedStatements(reply: Doc, retryable: RetryableStatements | undefined): Doc {
  if (retryable !== undefined && retryable.run.retriedStmtIds.length > 0) reply.retriedStmtIds = [...retryable.run.retriedStmtIds];
  return reply;
}
