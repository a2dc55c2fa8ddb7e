import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { compileUpdate } from '../../query/update/index.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalBool, optionalDoc, requireDocArray } from '../args.js';
import { applyUpdate, applyUpsert, findTargets } from './write_ops.js';
import { checkBatchSize, withWriteErrors, writeError } from './write_errors.js';
import { awaitWriteConcern } from './write_concern.js';

interface UpdateStatement {
  q: Doc;
  u: Doc | Doc[];
  upsert: boolean;
  multi: boolean;
  arrayFilters?: Doc[];
  hint?: unknown;
  sort?: Doc;
}

function parseStatement(raw: Doc): UpdateStatement {
  const q = raw.q;
  const u = raw.u;
  if (!isPlainObject(q)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'update.updates.q' is the wrong type, expected type 'object'");
  if (!isPlainObject(u) && !Array.isArray(u)) throw new MongoError(ErrorCodes.FailedToParse, 'Update argument must be either an object or an array');
  const multi = optionalBool(raw, 'multi') ?? false;
  const arrayFilters = raw.arrayFilters;
  if (arrayFilters !== undefined && !Array.isArray(arrayFilters)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'update.updates.arrayFilters' is the wrong type, expected type 'array'");
  return { q, u: u as Doc | Doc[], upsert: optionalBool(raw, 'upsert') ?? false, multi, arrayFilters: arrayFilters as Doc[] | undefined, hint: raw.hint, sort: optionalDoc(raw, 'sort') };
}

export const updateCommand: CommandDefinition = {
  names: ['update'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const statements = requireDocArray(cmd, 'updates');
    const ordered = optionalBool(cmd, 'ordered') ?? true;
    const variables = optionalDoc(cmd, 'let');
    checkBatchSize(statements.length);
    const { storage } = ctx.node;
    const errors: Doc[] = [];
    const upserted: Doc[] = [];
    let n = 0;
    let nModified = 0;
    storage.write((unit) => {
      for (let i = 0; i < statements.length; i++) {
        try {
          const st = parseStatement(statements[i]!);
          const update = compileUpdate(st.u, { arrayFilters: st.arrayFilters, variables });
          if (st.multi && update.kind === 'replacement') {
            throw new MongoError(ErrorCodes.FailedToParse, 'multi update is not supported for replacement-style update');
          }
          const coll = storage.getCollection(ns);
          const targets = findTargets(storage, coll, st.q, { sort: st.sort, hint: st.hint, limit: st.multi ? 0 : 1, variables });
          if (targets.length === 0 && st.upsert) {
            const target = coll ?? storage.ensureCollection(ns).coll;
            const doc = applyUpsert(unit, target, st.q, update);
            upserted.push({ index: i, _id: doc._id });
            n += 1;
            continue;
          }
          for (const t of targets) {
            n += 1;
            if (applyUpdate(unit, coll!, t, update).modified) nModified += 1;
          }
        } catch (err) {
          if (!(err instanceof MongoError)) throw err;
          errors.push(writeError(i, err));
          if (ordered) break;
        }
      }
    });
    ctx.node.counters.opcounters.update += statements.length;
    await awaitWriteConcern(ctx, cmd);
    const reply: Doc = { n, nModified };
    if (upserted.length > 0) reply.upserted = upserted;
    withWriteErrors(reply, errors);
    reply.ok = 1;
    return reply;
  },
};
