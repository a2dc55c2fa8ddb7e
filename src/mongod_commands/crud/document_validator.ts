import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { compileFilter, type Matcher } from '../../query/match/matcher.js';
import { compileJsonSchema } from '../../query/match/json_schema/json_schema.js';
import { usesScripts } from '../../query/js/script_usage.js';
import type { Collection } from '../../storage/storage_engine.js';
import type { CommandContext } from '../command.js';

// Schema validation as MongoDB does it: the collection's options carry `validator` (a query
// expression, $jsonSchema included), `validationLevel` (strict: every insert and update; moderate:
// updates of documents that passed; off) and `validationAction` (error refuses the write with
// DocumentValidationFailure, warn lets it through). Only user writes are checked; migrations and
// other internal writes are not, as in MongoDB.
export interface DocumentValidator {
  // `before`: the document an update replaces (none for an insert or an upsert).
  check(after: Doc, before?: Doc): void;
}

const VALIDATION_LEVELS = ['off', 'strict', 'moderate'];
const VALIDATION_ACTIONS = ['error', 'warn'];

// The validation options of a create or collMod, checked; the fields it does not carry are absent.
// `current`: the collection's options a collMod changes, which the new ones are checked with.
export function parseValidationOptions(cmd: Doc, current: Doc = {}): Doc {
  const out: Doc = {};
  if (cmd.validator !== undefined && !isPlainObject(cmd.validator)) throw new MongoError(ErrorCodes.TypeMismatch, "'validator' must be of type object");
  for (const [field, allowed] of [['validationLevel', VALIDATION_LEVELS], ['validationAction', VALIDATION_ACTIONS]] as const) {
    const value = cmd[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !allowed.includes(value)) throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${String(value)}' for field '${field}' is not a valid value.`);
    out[field] = value;
  }
  const validator = cmd.validator ?? current.validator;
  if (isPlainObject(validator)) {
    // $jsonSchema's encrypt keywords need every write checked and refused: MongoDB turns away a
    // validator holding them, or a level or action that would weaken one, with QueryFeatureNotAllowed.
    const level = out.validationLevel ?? current.validationLevel;
    const action = out.validationAction ?? current.validationAction;
    if (usesScripts(validator)) throw new MongoError(4660800, '$function cannot be used inside a validator.');
    compileFilter(validator, { encryptKeywords: level !== 'moderate' && action !== 'warn', javascript: false });
  }
  if (cmd.validator !== undefined) out.validator = cmd.validator;
  return out;
}

interface CompiledValidator {
  all: Matcher;
  // Why a document fails, as errInfo.details.
  explain(doc: Doc): Doc;
}

const compiled = new WeakMap<Doc, CompiledValidator>();

// errInfo.details: a $jsonSchema explains which of its rules failed; a validator of several clauses
// lists the clauses that failed.
function compileValidator(validator: Doc): CompiledValidator {
  const explainClause = (spec: Doc): ((doc: Doc) => Doc) => {
    if ('$jsonSchema' in spec) {
      const schema = compileJsonSchema(spec.$jsonSchema, { encryptKeywords: true });
      return (doc) => schema.explain(doc);
    }
    return () => ({ specifiedAs: spec });
  };
  const clauses = Object.entries(validator).map(([k, v]) => {
    const spec = { [k]: v };
    return { matcher: compileFilter(spec), explain: explainClause(spec) };
  });
  const all = compileFilter(validator);
  if (clauses.length === 1 && '$jsonSchema' in validator) return { all, explain: clauses[0]!.explain };
  return {
    all,
    explain: (doc) => ({
      operatorName: '$and',
      clausesNotSatisfied: clauses.flatMap((c, index) => (c.matcher.matches(doc) ? [] : [{ index, details: c.explain(doc) }])),
    }),
  };
}

// The collection's validator for a user write, or undefined when nothing is to be checked (no
// validator, level off, or the command's bypassDocumentValidation).
// With validationAction 'warn' the write goes through and the node's log names the document.
export function validatorFor(ctx: CommandContext, coll: Collection | undefined, cmd: Doc): DocumentValidator | undefined {
  const options = coll?.entry.options;
  const validator = options?.validator;
  if (!isPlainObject(validator) || cmd.bypassDocumentValidation === true || options!.validationLevel === 'off') return undefined;
  let rules = compiled.get(validator);
  if (rules === undefined) {
    rules = compileValidator(validator);
    compiled.set(validator, rules);
  }
  const { all, explain } = rules;
  const moderate = options!.validationLevel === 'moderate';
  const warnOnly = options!.validationAction === 'warn';
  return {
    check(after, before) {
      if (all.matches(after)) return;
      if (moderate && before !== undefined && !all.matches(before)) return;
      const details = explain(after);
      if (warnOnly) {
        ctx.node.logger.warn({ c: 'STORAGE', ns: coll!.ns, failingDocumentId: after._id, details }, 'Document would fail validation');
        return;
      }
      throw new MongoError(ErrorCodes.DocumentValidationFailure, 'Document failed validation', { errInfo: { failingDocumentId: after._id, details } });
    },
  };
}
