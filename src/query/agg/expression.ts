import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { arithmeticOperators } from './ops_arithmetic.js';
import { arrayOperators } from './ops_array.js';
import { comparisonOperators } from './ops_comparison.js';
import { dateOperators } from './ops_date.js';
import { objectOperators } from './ops_object.js';
import { regexOperators } from './ops_regex.js';
import { scriptOperators } from './ops_script.js';
import { setOperators } from './ops_set.js';
import { stringOperators } from './ops_string.js';
import { typeOperators } from './ops_type.js';
import { noOperationClock, operationClock } from '../../base/operation_clock.js';
import { fail, type Evaluator, type ExpressionParser, type OperatorTable } from './operator_support.js';

export type { Evaluator, ExpressionParser } from './operator_support.js';

const operators: OperatorTable = {
  ...arithmeticOperators,
  ...comparisonOperators,
  ...stringOperators,
  ...regexOperators,
  ...arrayOperators,
  ...setOperators,
  ...typeOperators,
  ...dateOperators,
  ...objectOperators,
  ...scriptOperators,
};

export function isExpressionOperator(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(operators, name);
}

// Variables every expression may name without declaring them. DESCEND/PRUNE/KEEP are $redact's.
const SYSTEM_VARIABLES = new Set(['ROOT', 'CURRENT', 'REMOVE', 'NOW', 'CLUSTER_TIME', 'DESCEND', 'PRUNE', 'KEEP', 'USER_ROLES', 'SEARCH_META']);

export interface CompileOptions {
  // Names (and default values) of user variables the expression may reference, e.g. `let`.
  variables?: Record<string, unknown>;
}

export function compileExpression(
  expr: unknown,
  options: CompileOptions = {},
): (root: Doc, vars?: Record<string, unknown>) => unknown {
  const defaults = options.variables ?? {};
  const evaluate = makeParser(new Set(Object.keys(defaults))).parse(expr);
  // $$NOW, when the caller gives none: the running command's clock, read once, at the first
  // evaluation that needs it.
  const needsNow = mentionsNow(expr);
  const clock = needsNow ? operationClock() : undefined;
  let fallbackNow: Date | undefined;
  return (root, vars) => {
    const scope: Record<string, unknown> = { ...defaults, CURRENT: root, ...vars };
    if (needsNow && scope.NOW === undefined) {
      if (clock === undefined) throw noOperationClock();
      scope.NOW = fallbackNow ??= new Date(clock.now());
    }
    return evaluate({ root, vars: scope });
  };
}

function mentionsNow(expr: unknown): boolean {
  if (typeof expr === 'string') return expr === '$$NOW' || expr.startsWith('$$NOW.');
  if (Array.isArray(expr)) return expr.some(mentionsNow);
  return isPlainObject(expr) && Object.values(expr).some(mentionsNow);
}

// Compiles with a parser whose scope already holds `names`; the stages use this so that
// per-document variables ($lookup's let, $redact's system variables) are known at parse time.
export function parseExpression(expr: unknown, names: Iterable<string> = []): Evaluator {
  return makeParser(new Set(names)).parse(expr);
}

export function makeParser(scope: Set<string>): ExpressionParser {
  const parser: ExpressionParser = {
    parse: (expr) => parseAny(expr, parser, scope),
    withVariables: (names) => makeParser(new Set([...scope, ...names])),
  };
  return parser;
}

function parseAny(expr: unknown, parser: ExpressionParser, scope: Set<string>): Evaluator {
  if (typeof expr === 'string' && expr.startsWith('$')) return parsePathOrVariable(expr, scope);
  if (Array.isArray(expr)) {
    const items = expr.map((e) => parser.parse(e));
    // A missing element of an array expression becomes null, as in MongoDB.
    return (ctx) => items.map((item) => {
      const v = item(ctx);
      return v === undefined ? null : v;
    });
  }
  if (isPlainObject(expr)) return parseObject(expr, parser);
  return () => expr;
}

function parseObject(obj: Doc, parser: ExpressionParser): Evaluator {
  const keys = Object.keys(obj);
  if (keys.length > 0 && keys[0]!.startsWith('$')) {
    if (keys.length !== 1) {
      fail(15983, `an expression specification must contain exactly one field, the name of the expression. Found ${keys.length} fields in ${JSON.stringify(obj)}, while parsing object ${JSON.stringify(obj)}`);
    }
    return parseOperator(keys[0]!, obj[keys[0]!], parser);
  }
  const fields: [string, Evaluator][] = [];
  for (const key of keys) {
    if (key.startsWith('$')) fail(16404, `FieldPath field names may not start with '$'. Consider using $getField or $setField.`);
    if (key.includes('.')) fail(16412, `FieldPath field names may not contain '.'. Consider using $getField or $setField.`);
    if (key === '') fail(16410, 'FieldPath field names may not be empty strings.');
    fields.push([key, parser.parse(obj[key])]);
  }
  return (ctx) => {
    const out: Doc = {};
    for (const [key, evaluate] of fields) {
      const v = evaluate(ctx);
      if (v !== undefined) out[key] = v;
    }
    return out;
  };
}

// Metadata no stage of ours gives a document (search scores, geo distances) is missing. The text
// score is read from a field by pipelines that start with $text (text_score.ts), so one asked for
// here has no $text to come from.
const META_NAMES = new Set(['textScore', 'randVal', 'searchScore', 'searchHighlights', 'geoNearDistance', 'geoNearPoint', 'indexKey', 'recordId', 'sortKey', 'searchScoreDetails', 'vectorSearchScore']);

function parseMeta(args: unknown): Evaluator {
  if (typeof args !== 'string') fail(17307, '$meta only supports string arguments');
  if (!META_NAMES.has(args)) fail(17308, `Unsupported argument to $meta: ${args}`);
  if (args !== 'textScore') return () => undefined;
  return () => fail(40218, 'query requires text score metadata, but it is not available');
}

function parseOperator(name: string, args: unknown, parser: ExpressionParser): Evaluator {
  if (name === '$literal') return () => args;
  if (name === '$meta') return parseMeta(args);
  const op = Object.prototype.hasOwnProperty.call(operators, name) ? operators[name] : undefined;
  if (op === undefined) throw new MongoError(ErrorCodes.InvalidPipelineOperator, `Unrecognized expression '${name}'`);
  return op(args, parser, name);
}

function parsePathOrVariable(text: string, scope: Set<string>): Evaluator {
  if (text.startsWith('$$')) {
    const [variable, ...rest] = text.slice(2).split('.');
    const name = variable!;
    validateVariableReference(name, scope);
    const path = validatePath(rest);
    if (name === 'REMOVE') return () => undefined;
    if (name === 'ROOT') return (ctx) => walkPath(ctx.root, path);
    return (ctx) => {
      if (!(name in ctx.vars)) fail(17276, `Use of undefined variable: ${name}`);
      return walkPath(ctx.vars[name], path);
    };
  }
  if (text === '$') fail(16872, "'$' by itself is not a valid FieldPath");
  const path = validatePath(text.slice(1).split('.'));
  return (ctx) => walkPath(ctx.vars.CURRENT, path);
}

function validateVariableReference(name: string, scope: Set<string>): void {
  if (name === '') fail(16869, 'empty variable names are not allowed');
  if (SYSTEM_VARIABLES.has(name) || scope.has(name)) return;
  fail(17276, `Use of undefined variable: ${name}`);
}

function validatePath(components: string[]): string[] {
  for (const c of components) {
    if (c === '') fail(15998, 'FieldPath field names may not be empty strings.');
    if (c.startsWith('$')) fail(16410, `FieldPath field names may not start with '$'. Consider using $getField or $setField.`);
  }
  return components;
}

// Field path semantics of aggregation: descending into an array applies the rest of the path to
// each element, dropping elements where it is missing but keeping nested arrays as arrays.
export function walkPath(value: unknown, path: readonly string[], from = 0): unknown {
  let current = value;
  for (let i = from; i < path.length; i++) {
    if (Array.isArray(current)) return walkArray(current, path, i);
    if (!isPlainObject(current)) return undefined;
    current = Object.prototype.hasOwnProperty.call(current, path[i]!) ? current[path[i]!] : undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

function walkArray(array: unknown[], path: readonly string[], from: number): unknown[] {
  const out: unknown[] = [];
  for (const element of array) {
    if (Array.isArray(element)) {
      out.push(walkArray(element, path, from));
    } else if (isPlainObject(element)) {
      const v = walkPath(element, path, from);
      if (v !== undefined) out.push(v);
    }
  }
  return out;
}
