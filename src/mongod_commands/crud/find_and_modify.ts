import { letVariables } from '../../command_layer/let_variables.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { withCollation } from '../../bson/collation.js';
import { compileProjection } from '../../query/projection/projection.js';
import { compileUpdate } from '../../query/update/index.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalBool, optionalDoc } from '../../command_layer/args.js';
import { applyUpdate, applyUpsert, findTargets, shardKeyGuard } from './write_ops.js';
import { recordSampledDiff } from './sampled_diff.js';
import { validatorFor } from './document_validator.js';
import { replyAfterWriteConcern } from './write_concern.js';
import { ownedDocuments } from './orphan_filter.js';
import { commandCollation } from './collection_collation.js';
import { retryableStatements } from './retryable_write_run.js';
import type { WriteUnit } from '../../storage/storage_engine.js';

export const findAndModifyCommand: CommandDefinition = {
  names: ['findAndModify', 'findandmodify'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const query = optionalDoc(cmd, 'query') ?? {};
    const sort = optionalDoc(cmd, 'sort');
    const fields = optionalDoc(cmd, 'fields');
    const remove = optionalBool(cmd, 'remove') ?? false;
    const returnNew = optionalBool(cmd, 'new') ?? false;
    const upsert = optionalBool(cmd, 'upsert') ?? false;
    const variables = letVariables(cmd);
    const rawUpdate = cmd.update;
    if (remove && rawUpdate !== undefined) throw new MongoError(ErrorCodes.FailedToParse, 'Cannot specify both an update and remove=true');
    if (!remove && rawUpdate === undefined) throw new MongoError(ErrorCodes.FailedToParse, 'Either an update or remove=true must be specified');
    if (remove && upsert) throw new MongoError(ErrorCodes.FailedToParse, 'Cannot specify both upsert=true and remove=true ');
    if (remove && returnNew) throw new MongoError(ErrorCodes.FailedToParse, 'Cannot specify both new=true and remove=true; \'remove\' always returns the deleted document');
    if (rawUpdate !== undefined && !isPlainObject(rawUpdate) && !Array.isArray(rawUpdate)) {
      throw new MongoError(ErrorCodes.FailedToParse, 'Update argument must be either an object or an array');
    }
    const update = rawUpdate === undefined ? undefined : compileUpdate(rawUpdate as Doc | Doc[], { arrayFilters: cmd.arrayFilters as Doc[] | undefined, variables });
    const projector = fields && Object.keys(fields).length > 0 ? compileProjection(fields) : undefined;
    const { storage } = ctx.node;
    const collation = commandCollation(storage, ns, cmd.collation);
    const result = storage.writeWaitingForTransactions((unit) => withCollation(collation, () => {
      const retry = retryableStatements(ctx, unit, cmd, ns, 1);
      const stmtId = retry?.stmtIds[0] ?? 0;
      // A retry of one that ran answers with what it answered then: its image is the session's.
      const prior = retry?.run.executed(stmtId);
      if (prior?.op === 'findAndModify') {
        return { lastErrorObject: prior.lastErrorObject, value: prior.image === 'none' ? null : retry!.run.storedImage() };
      }
      const outcome = modify(unit);
      if (retry !== undefined) {
        const image = outcome.value === null ? undefined : { kind: returnNew ? 'postImage' as const : 'preImage' as const, doc: outcome.value };
        retry.run.record(stmtId, { op: 'findAndModify', lastErrorObject: outcome.lastErrorObject, image: image?.kind ?? 'none' }, { image, key: outcome.written && retry.keyOf(outcome.written) });
        retry.run.finish();
      }
      return { lastErrorObject: outcome.lastErrorObject, value: outcome.value };
    }));
    const value = result.value && projector ? projector.apply(result.value) : result.value;
    return replyAfterWriteConcern(ctx, cmd, { lastErrorObject: result.lastErrorObject, value, ok: 1 });

    // `written`: the document the write left (or removed), whose shard key its history keeps.
    function modify(unit: WriteUnit): { lastErrorObject: Doc; value: Doc | null; written?: Doc } {
      const coll = storage.getCollection(ns);
      const validator = validatorFor(ctx, coll, cmd);
      const [target] = findTargets(storage, coll, query, { sort, hint: cmd.hint, limit: 1, variables, collation, keep: ownedDocuments(ctx, cmd, ns) });
      const now = new Date(ctx.node.wallClock.now());
      if (!target) {
        if (!update || !upsert) return { lastErrorObject: { n: 0, updatedExisting: false }, value: null };
        const doc = applyUpsert(unit, coll ?? storage.ensureCollection(ns).coll, query, update, now, validator);
        return { lastErrorObject: { n: 1, updatedExisting: false, upserted: doc._id }, value: returnNew ? doc : null, written: doc };
      }
      if (!update) {
        unit.remove(coll!, target.recordId, target.doc, target.size);
        return { lastErrorObject: { n: 1 }, value: target.doc, written: target.doc };
      }
      const { after } = applyUpdate(unit, coll!, target, update, now, shardKeyGuard(ctx, cmd, ns), validator);
      recordSampledDiff(storage, unit, coll!, cmd.sampleId, target.doc, after, now);
      return { lastErrorObject: { n: 1, updatedExisting: true }, value: returnNew ? after : target.doc, written: after };
    }
  },
};
