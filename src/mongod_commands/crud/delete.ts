import { letVariables } from '../../command_layer/let_variables.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { withCollation } from '../../bson/collation.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalBool, requireDocArray } from '../../command_layer/args.js';
import { findTargets } from './write_ops.js';
import { checkBatchSize, withWriteErrors, writeError } from '../../command_layer/write_errors.js';
import { groupedWriteReply } from './write_concern.js';
import { ownedDocuments } from './orphan_filter.js';
import { commandCollation } from './collection_collation.js';
import { refuseUnretryable, retryableStatements, withRetriedStatements } from './retryable_write_run.js';

export const deleteCommand: CommandDefinition = {
  names: ['delete'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const statements = requireDocArray(cmd, 'deletes');
    const ordered = optionalBool(cmd, 'ordered') ?? true;
    const variables = letVariables(cmd);
    checkBatchSize(statements.length);
    const { storage } = ctx.node;
    const owned = ownedDocuments(ctx, cmd, ns);
    if (statements.some((st) => isNumber(st.limit) && toDouble(st.limit) === 0)) refuseUnretryable(cmd, 'limit=0');
    return groupedWriteReply(ctx, cmd, () => {
      const errors: Doc[] = [];
      let n = 0;
      const retryable = storage.writeWaitingForTransactions((unit) => {
        const retry = retryableStatements(ctx, unit, cmd, ns, statements.length);
        for (let i = 0; i < statements.length; i++) {
          try {
            // A retried delete that ran is answered with what it did then.
            const prior = retry?.run.executed(retry.stmtIds[i]!);
            if (prior?.op === 'delete') {
              n += prior.n;
              continue;
            }
            const st = statements[i]!;
            if (!isPlainObject(st.q)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'delete.deletes.q' is the wrong type, expected type 'object'");
            if (!isNumber(st.limit)) throw new MongoError(40414, "BSON field 'delete.deletes.limit' is missing but a required field");
            const limit = toDouble(st.limit);
            if (limit !== 0 && limit !== 1) throw new MongoError(ErrorCodes.FailedToParse, `The limit field in delete objects must be 0 or 1. Got ${limit}`);
            const coll = storage.getCollection(ns);
            const collation = commandCollation(storage, ns, st.collation);
            const targets = withCollation(collation, () => findTargets(storage, coll, st.q as Doc, { hint: st.hint, limit, variables, collation, keep: owned }));
            for (const t of targets) {
              unit.remove(coll!, t.recordId, t.doc, t.size);
              n += 1;
            }
            retry?.run.record(retry.stmtIds[i]!, { op: 'delete', n: targets.length }, { key: targets[0] && retry.keyOf(targets[0].doc) });
          } catch (err) {
            if (!(err instanceof MongoError)) throw err;
            errors.push(writeError(i, err));
            if (ordered) break;
          }
        }
        retry?.run.finish();
        return retry;
      });
      ctx.node.counters.opcounters.delete += statements.length;
      return withWriteErrors(withRetriedStatements({ n, ok: 1 }, retryable), errors);
    });
  },
};
