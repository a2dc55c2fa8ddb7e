import { letVariables } from '../../command_layer/let_variables.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { withCollation } from '../../bson/collation.js';
import { compileUpdate } from '../../query/update/index.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalBool, requireDocArray } from '../../command_layer/args.js';
import { applyUpdate, applyUpsert, findTargets, shardKeyGuard } from './write_ops.js';
import { validatorFor } from './document_validator.js';
import { checkBatchSize, withWriteErrors, writeError } from '../../command_layer/write_errors.js';
import { groupedWriteReply } from './write_concern.js';
import { ownedDocuments } from './orphan_filter.js';
import { commandCollation } from './collection_collation.js';
import { refuseUnretryable, retryableStatements, withRetriedStatements } from './retryable_write_run.js';
import { recordSampledDiff } from './sampled_diff.js';

interface UpdateStatement {
  q: Doc;
  u: Doc | Doc[];
  upsert: boolean;
  multi: boolean;
  arrayFilters?: Doc[];
  hint?: unknown;
}

function parseStatement(raw: Doc): UpdateStatement {
  const q = raw.q;
  const u = raw.u;
  if (!isPlainObject(q)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'update.updates.q' is the wrong type, expected type 'object'");
  if (!isPlainObject(u) && !Array.isArray(u)) throw new MongoError(ErrorCodes.FailedToParse, 'Update argument must be either an object or an array');
  const multi = optionalBool(raw, 'multi') ?? false;
  const arrayFilters = raw.arrayFilters;
  if (arrayFilters !== undefined && !Array.isArray(arrayFilters)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'update.updates.arrayFilters' is the wrong type, expected type 'array'");
  // `sort` on single-document updates arrived in MongoDB 8.0; a 7.0 server rejects it as unknown.
  if (raw.sort !== undefined) throw new MongoError(40415, "BSON field 'update.updates.sort' is an unknown field.");
  return { q, u: u as Doc | Doc[], upsert: optionalBool(raw, 'upsert') ?? false, multi, arrayFilters: arrayFilters as Doc[] | undefined, hint: raw.hint };
}

export const updateCommand: CommandDefinition = {
  names: ['update'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const statements = requireDocArray(cmd, 'updates');
    const ordered = optionalBool(cmd, 'ordered') ?? true;
    const variables = letVariables(cmd);
    checkBatchSize(statements.length);
    // Statement shapes are checked before any is applied: a malformed one fails the whole command
    // (as MongoDB's IDL parsing does), not just its own entry.
    const parsed = statements.map(parseStatement);
    if (parsed.some((st) => st.multi)) refuseUnretryable(cmd, 'multi=true');
    const guard = shardKeyGuard(ctx, cmd, ns);
    const owned = ownedDocuments(ctx, cmd, ns);
    const { storage } = ctx.node;
    return groupedWriteReply(ctx, cmd, () => {
      const errors: Doc[] = [];
      const upserted: Doc[] = [];
      let n = 0;
      let nModified = 0;
      const retryable = storage.writeWaitingForTransactions((unit) => {
        const retry = retryableStatements(ctx, unit, cmd, ns, statements.length);
        const runStatement = (i: number): void => {
          // A retried update that ran is answered with what it did then, and not applied again.
          const prior = retry?.run.executed(retry.stmtIds[i]!);
          if (prior?.op === 'update') {
            n += prior.n;
            nModified += prior.nModified;
            if (prior.upserted !== undefined) upserted.push({ index: i, _id: prior.upserted });
            return;
          }
          const before = { n, nModified };
          const st = parsed[i]!;
          const collation = commandCollation(storage, ns, statements[i]!.collation);
          // A statement that fails counts nothing (WouldChangeOwningShard fails after matching).
          const failed = (err: unknown): never => {
            n = before.n;
            nModified = before.nModified;
            throw err;
          };
          withCollation(collation, () => {
            const update = compileUpdate(st.u, { arrayFilters: st.arrayFilters, variables });
            if (st.multi && update.kind === 'replacement') {
              throw new MongoError(ErrorCodes.FailedToParse, 'multi update is not supported for replacement-style update');
            }
            const coll = storage.getCollection(ns);
            const validator = validatorFor(ctx, coll, cmd);
            const targets = findTargets(storage, coll, st.q, { hint: st.hint, limit: st.multi ? 0 : 1, variables, collation, keep: owned });
            const now = new Date(ctx.node.wallClock.now());
            if (targets.length === 0 && st.upsert) {
              const doc = applyUpsert(unit, coll ?? storage.ensureCollection(ns).coll, st.q, update, now, validator);
              upserted.push({ index: i, _id: doc._id });
              n += 1;
              retry?.run.record(retry.stmtIds[i]!, { op: 'update', n: 1, nModified: 0, upserted: doc._id }, { key: retry.keyOf(doc) });
              return;
            }
            let written: Doc | undefined;
            const sampleId = statements[i]!.sampleId;
            let diffRecorded = sampleId === undefined;
            for (const t of targets) {
              n += 1;
              let applied: { after: Doc; modified: boolean };
              try {
                applied = applyUpdate(unit, coll!, t, update, now, guard, validator);
              } catch (err) {
                failed(err);
              }
              if (applied!.modified) nModified += 1;
              written = applied!.after;
              if (!diffRecorded && applied!.modified) diffRecorded = recordSampledDiff(storage, unit, coll!, sampleId, t.doc, written, now);
            }
            retry?.run.record(retry.stmtIds[i]!, { op: 'update', n: n - before.n, nModified: nModified - before.nModified }, { key: written && retry.keyOf(written) });
          });
        };
        for (let i = 0; i < statements.length; i++) {
          try {
            runStatement(i);
          } catch (err) {
            if (!(err instanceof MongoError)) throw err;
            errors.push(writeError(i, err));
            if (ordered) break;
          }
        }
        retry?.run.finish();
        return retry;
      });
      ctx.node.counters.opcounters.update += statements.length;
      const reply: Doc = { n, nModified };
      if (upserted.length > 0) reply.upserted = upserted;
      withRetriedStatements(reply, retryable);
      withWriteErrors(reply, errors);
      reply.ok = 1;
      return reply;
    });
  },
};
