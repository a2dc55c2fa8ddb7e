import { bsonTypeName } from '../../bson/compare.js';
import { Double, isPlainObject, type Doc } from '../../bson/values.js';
import { constantOf } from './constant.js';
import { fail, isNullish, parseVariadic, type Evaluator, type ExpressionParser, type OperatorTable } from './operator_support.js';

export function mergeInto(target: Doc, source: unknown, index: number): void {
  if (isNullish(source)) return;
  if (!isPlainObject(source)) fail(40400, `$mergeObjects requires object inputs, but input ${index} is of type ${bsonTypeName(source)}`);
  for (const key of Object.keys(source)) {
    if (source[key] !== undefined) target[key] = source[key];
  }
}

function parseMergeObjects(args: unknown, parser: ExpressionParser): Evaluator {
  const items = parseVariadic(args, parser);
  return (ctx) => {
    const out: Doc = {};
    items.forEach((item, i) => mergeInto(out, item(ctx), i));
    return out;
  };
}

// $getField's and $setField's `field` must be a constant string (possibly behind $literal).
function constantField(spec: unknown, opName: string): string {
  const c = constantOf(spec);
  if (c === undefined) fail(5648200, `${opName} requires 'field' to evaluate to a constant, but got a non-constant argument`);
  if (typeof c.value !== 'string') fail(5648201, `${opName} requires 'field' to evaluate to type String, but got ${bsonTypeName(c.value)}`);
  return c.value;
}

function parseGetField(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  let fieldSpec: unknown = args;
  let input: Evaluator = (ctx) => ctx.vars.CURRENT;
  if (isPlainObject(args) && !Object.keys(args).some((k) => k.startsWith('$'))) {
    for (const key of Object.keys(args)) {
      if (key !== 'field' && key !== 'input') fail(3041701, `${name} found an unknown argument: ${key}`);
    }
    if (!('field' in args)) fail(3041702, `${name} requires 'field' to be specified`);
    if (!('input' in args)) fail(3041703, `${name} requires 'input' to be specified`);
    fieldSpec = args.field;
    input = parser.parse(args.input);
  }
  const field = constantField(fieldSpec, name);
  return (ctx) => {
    const obj = input(ctx);
    if (isNullish(obj)) return null;
    if (!isPlainObject(obj)) return undefined;
    return Object.prototype.hasOwnProperty.call(obj, field) ? obj[field] : undefined;
  };
}

function parseSetField(remove: boolean) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    if (!isPlainObject(args)) fail(4161100, `${name} only supports an object as its argument`);
    const allowed = remove ? ['field', 'input'] : ['field', 'input', 'value'];
    for (const key of Object.keys(args)) {
      if (!allowed.includes(key)) fail(4161101, `${name} found an unknown argument: ${key}`);
    }
    for (const key of allowed) {
      if (!(key in args)) fail(4161102, `${name} requires '${key}' to be specified`);
    }
    const field = constantField(args.field, name);
    const input = parser.parse(args.input);
    const value = remove ? () => undefined : parser.parse(args.value);
    return (ctx) => {
      const obj = input(ctx);
      if (isNullish(obj)) return null;
      if (!isPlainObject(obj)) fail(4161105, `${name} requires 'input' to evaluate to type Object`);
      const v = value(ctx);
      const out: Doc = { ...obj };
      if (v === undefined) delete out[field];
      else out[field] = v;
      return out;
    };
  };
}

function parseLet(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  if (!isPlainObject(args)) fail(16874, `${name} only supports an object as its argument`);
  for (const key of Object.keys(args)) {
    if (key !== 'vars' && key !== 'in') fail(16875, `Unrecognized parameter to $let: ${key}`);
  }
  if (!('vars' in args)) fail(16876, "Missing 'vars' parameter to $let");
  if (!('in' in args)) fail(16877, "Missing 'in' parameter to $let");
  if (!isPlainObject(args.vars)) fail(10065, `invalid parameter: expected an object (vars)`);
  const definitions = Object.entries(args.vars).map(([varName, expr]) => {
    if (!/^[a-z\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*$/.test(varName)) {
      fail(16867, `'${varName}' starts with an invalid character for a user variable name`);
    }
    // Variable definitions see only the outer scope, never each other.
    return [varName, parser.parse(expr)] as const;
  });
  const body = parser.withVariables(definitions.map(([n]) => n)).parse(args.in);
  return (ctx) => {
    const vars = { ...ctx.vars };
    for (const [varName, evaluate] of definitions) vars[varName] = evaluate(ctx);
    return body({ root: ctx.root, vars });
  };
}

export const objectOperators: OperatorTable = {
  $mergeObjects: parseMergeObjects,
  $getField: parseGetField,
  $setField: parseSetField(false),
  $unsetField: parseSetField(true),
  $let: parseLet,
  $rand: (args) => {
    if (!isPlainObject(args) || Object.keys(args).length > 0) fail(3040500, '$rand not expecting arguments');
    return () => new Double(Math.random());
  },
};
