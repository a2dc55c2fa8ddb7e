import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { compileFilter, type Matcher } from '../../query/match/matcher.js';
import type { Collection } from '../../storage/storage_engine.js';
import type { CommandContext } from '../command.js';

// Schema validation as MongoDB does it with a query-expression validator: the collection's
// options carry `validator`, `validationLevel` (strict: every insert and update; moderate: updates
// of documents that passed; off) and `validationAction` (error refuses the write with
// DocumentValidationFailure, warn lets it through). Only user writes are checked; migrations and
// other internal writes are not, as in MongoDB. `$jsonSchema` is not implemented.
export interface DocumentValidator {
  // `before`: the document an update replaces (none for an insert or an upsert).
  check(after: Doc, before?: Doc): void;
}

const VALIDATION_LEVELS = ['off', 'strict', 'moderate'];
const VALIDATION_ACTIONS = ['error', 'warn'];

// The validation options of a create or collMod, checked; the fields it does not carry are absent.
export function parseValidationOptions(cmd: Doc): Doc {
  const out: Doc = {};
  if (cmd.validator !== undefined) {
    if (!isPlainObject(cmd.validator)) throw new MongoError(ErrorCodes.TypeMismatch, "'validator' must be of type object");
    if ('$jsonSchema' in cmd.validator) throw new MongoError(ErrorCodes.NotImplemented, '$jsonSchema validators are not supported by docshard; use a query expression');
    compileFilter(cmd.validator);
    out.validator = cmd.validator;
  }
  for (const [field, allowed] of [['validationLevel', VALIDATION_LEVELS], ['validationAction', VALIDATION_ACTIONS]] as const) {
    const value = cmd[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !allowed.includes(value)) throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${String(value)}' for field '${field}' is not a valid value.`);
    out[field] = value;
  }
  return out;
}

const compiled = new WeakMap<Doc, { all: Matcher; clauses: { spec: Doc; matcher: Matcher }[] }>();

// The collection's validator for a user write, or undefined when nothing is to be checked (no
// validator, level off, or the command's bypassDocumentValidation).
// With validationAction 'warn' the write goes through and the node's log names the document.
export function validatorFor(ctx: CommandContext, coll: Collection | undefined, cmd: Doc): DocumentValidator | undefined {
  const options = coll?.entry.options;
  const validator = options?.validator;
  if (!isPlainObject(validator) || cmd.bypassDocumentValidation === true || options!.validationLevel === 'off') return undefined;
  let rules = compiled.get(validator);
  if (rules === undefined) {
    rules = { all: compileFilter(validator), clauses: Object.entries(validator).map(([k, v]) => ({ spec: { [k]: v }, matcher: compileFilter({ [k]: v }) })) };
    compiled.set(validator, rules);
  }
  const { all, clauses } = rules;
  const moderate = options!.validationLevel === 'moderate';
  const warnOnly = options!.validationAction === 'warn';
  return {
    check(after, before) {
      if (all.matches(after)) return;
      if (moderate && before !== undefined && !all.matches(before)) return;
      const details = {
        operatorName: '$and',
        clausesNotSatisfied: clauses.flatMap((c, index) => (c.matcher.matches(after) ? [] : [{ index, details: { specifiedAs: c.spec } }])),
      };
      if (warnOnly) {
        ctx.node.logger.warn({ c: 'STORAGE', ns: coll!.ns, failingDocumentId: after._id, details }, 'Document would fail validation');
        return;
      }
      throw new MongoError(ErrorCodes.DocumentValidationFailure, 'Document failed validation', { errInfo: { failingDocumentId: after._id, details } });
    },
  };
}
