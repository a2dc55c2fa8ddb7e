import { bsonTypeName } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble } from '../../bson/values.js';
import {
  coerceToString, fail, isNullish, parseArgs, parseVariadic, type Evaluator, type ExpressionParser, type OperatorTable,
} from './operator_support.js';

// String operators. MongoDB strings are UTF-8, so "bytes" operators index the UTF-8 encoding and
// "CP" operators index code points; JS strings (UTF-16) are converted as needed.

function utf8(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

function isContinuationByte(b: number | undefined): boolean {
  return b !== undefined && (b & 0xc0) === 0x80;
}

// MongoDB's case mapping is ASCII-only.
function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function asciiUpper(s: string): string {
  return s.replace(/[a-z]/g, (c) => c.toUpperCase());
}

function parseSubstrBytes(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [strArg, startArg, lengthArg] = parseArgs(args, parser, name, 3) as [Evaluator, Evaluator, Evaluator];
  return (ctx) => {
    const s = coerceToString(strArg(ctx), '$substrBytes');
    const start = startArg(ctx);
    const length = lengthArg(ctx);
    if (!isNumber(start)) fail(16034, `$substrBytes: starting index must be a numeric type (is BSON type ${bsonTypeName(start)})`);
    if (!isNumber(length)) fail(16035, `$substrBytes: length must be a numeric type (is BSON type ${bsonTypeName(length)})`);
    const lower = Math.trunc(toDouble(start));
    const len = Math.trunc(toDouble(length));
    if (lower < 0) fail(50752, `$substrBytes: starting index must be non-negative (got: ${lower})`);
    const bytes = utf8(s);
    if (lower >= bytes.length) return '';
    if (isContinuationByte(bytes[lower])) fail(28656, '$substrBytes:  Invalid range, starting index is a UTF-8 continuation byte.');
    const upper = len < 0 || lower + len > bytes.length ? bytes.length : lower + len;
    if (isContinuationByte(bytes[upper])) fail(28657, '$substrBytes:  Invalid range, ending index is in the middle of a UTF-8 character.');
    return bytes.subarray(lower, upper).toString('utf8');
  };
}

function parseSubstrCP(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [strArg, startArg, lengthArg] = parseArgs(args, parser, name, 3) as [Evaluator, Evaluator, Evaluator];
  return (ctx) => {
    const s = coerceToString(strArg(ctx), '$substrCP');
    const start = startArg(ctx);
    const length = lengthArg(ctx);
    if (!isNumber(start)) fail(34450, `$substrCP: starting index must be a numeric type (is BSON type ${bsonTypeName(start)})`);
    if (!Number.isInteger(toDouble(start))) fail(34451, '$substrCP: starting index cannot be represented as a 32-bit integral value');
    if (!isNumber(length)) fail(34452, `$substrCP: length must be a numeric type (is BSON type ${bsonTypeName(length)})`);
    if (!Number.isInteger(toDouble(length))) fail(34453, '$substrCP: length cannot be represented as a 32-bit integral value');
    const lower = toDouble(start);
    const len = toDouble(length);
    if (len < 0) fail(34454, '$substrCP: length must be a nonnegative integer.');
    if (lower < 0) fail(34455, '$substrCP: the starting index must be nonnegative integer.');
    return Array.from(s).slice(lower, lower + len).join('');
  };
}

function stringArg(name: string, code: number, v: unknown): string {
  if (typeof v !== 'string') fail(code, `${name} requires a string argument, found: ${bsonTypeName(v)}`);
  return v;
}

function parseSplit(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [strArg, delimArg] = parseArgs(args, parser, name, 2) as [Evaluator, Evaluator];
  return (ctx) => {
    const s = strArg(ctx);
    const d = delimArg(ctx);
    if (isNullish(s) || isNullish(d)) return null;
    if (typeof s !== 'string') fail(40085, `$split requires an expression that evaluates to a string as a first argument, found: ${bsonTypeName(s)}`);
    if (typeof d !== 'string') fail(40086, `$split requires an expression that evaluates to a string as a second argument, found: ${bsonTypeName(d)}`);
    if (d === '') fail(40087, '$split requires a non-empty separator');
    return s.split(d);
  };
}

const DEFAULT_TRIM_CHARS = [
  '\0', ' ', '\t', '\n', '\v', '\f', '\r', '\u00a0', '\u1680', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005',
  '\u2006', '\u2007', '\u2008', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000',
];

function parseTrim(left: boolean, right: boolean) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    if (!isPlainObject(args)) fail(50696, `${name} only supports an object as its argument`);
    for (const key of Object.keys(args)) {
      if (key !== 'input' && key !== 'chars') fail(50694, `${name} found an unknown argument: ${key}`);
    }
    if (!('input' in args)) fail(50695, `${name} requires an 'input' field`);
    const inputArg = parser.parse(args.input);
    const charsArg = 'chars' in args ? parser.parse(args.chars) : undefined;
    return (ctx) => {
      const input = inputArg(ctx);
      if (isNullish(input)) return null;
      if (typeof input !== 'string') fail(50699, `${name} requires its input to be a string, got ${coerceForMessage(input)} (of type ${bsonTypeName(input)}) instead.`);
      let chars = DEFAULT_TRIM_CHARS;
      if (charsArg !== undefined) {
        const c = charsArg(ctx);
        if (isNullish(c)) return null;
        if (typeof c !== 'string') fail(50700, `${name} requires 'chars' to be a string, got ${coerceForMessage(c)} (of type ${bsonTypeName(c)}) instead.`);
        chars = Array.from(c);
      }
      const cps = Array.from(input);
      let from = 0;
      let to = cps.length;
      if (left) while (from < to && chars.includes(cps[from]!)) from++;
      if (right) while (to > from && chars.includes(cps[to - 1]!)) to--;
      return cps.slice(from, to).join('');
    };
  };
}

function coerceForMessage(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : String(isNumber(v) ? toDouble(v) : JSON.stringify(v));
}

// $indexOfBytes and $indexOfCP share everything but the unit of their positions.
function parseIndexOf(unit: 'bytes' | 'cp') {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const parsed = parseArgs(args, parser, name, 2, 4);
    return (ctx) => {
      const s = parsed[0]!(ctx);
      if (isNullish(s)) return null;
      if (typeof s !== 'string') fail(40091, `${name} requires a string as the first argument, found: ${bsonTypeName(s)}`);
      const sub = parsed[1]!(ctx);
      if (typeof sub !== 'string') fail(40092, `${name} requires a string as the second argument, found: ${bsonTypeName(sub)}`);
      const units: string[] | Buffer = unit === 'bytes' ? utf8(s) : Array.from(s);
      const needle: string[] | Buffer = unit === 'bytes' ? utf8(sub) : Array.from(sub);
      const bound = (i: number, what: string): number => {
        const v = parsed[i]!(ctx);
        if (!isNumber(v) || !Number.isInteger(toDouble(v))) {
          fail(40096, `${name} requires an integral ${what}, found a value of type: ${bsonTypeName(v)}, with value: ${coerceForMessage(v)}`);
        }
        if (toDouble(v) < 0) fail(40097, `${name} requires a nonnegative ${what}, found: ${toDouble(v)}`);
        return toDouble(v);
      };
      const start = parsed.length > 2 ? bound(2, 'starting index') : 0;
      let end = parsed.length > 3 ? bound(3, 'ending index') : units.length;
      end = Math.min(end, units.length);
      if (start > end) return -1;
      for (let i = start; i + needle.length <= end; i++) {
        let ok = true;
        for (let j = 0; j < needle.length; j++) {
          if (units[i + j] !== needle[j]) {
            ok = false;
            break;
          }
        }
        if (ok) return i;
      }
      return -1;
    };
  };
}

function parseReplace(all: boolean) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    if (!isPlainObject(args)) fail(51751, `${name} requires an object as an argument, found: ${bsonTypeName(args)}`);
    for (const key of Object.keys(args)) {
      if (key !== 'input' && key !== 'find' && key !== 'replacement') fail(51750, `${name} found an unknown argument: ${key}`);
    }
    for (const key of ['input', 'find', 'replacement']) {
      if (!(key in args)) fail(51749, `${name} requires '${key}' to be specified`);
    }
    const input = parser.parse(args.input);
    const find = parser.parse(args.find);
    const replacement = parser.parse(args.replacement);
    return (ctx) => {
      const values = [input(ctx), find(ctx), replacement(ctx)];
      const names = ['input', 'find', 'replacement'];
      for (let i = 0; i < 3; i++) {
        const v = values[i];
        if (!isNullish(v) && typeof v !== 'string') fail(51746, `${name} requires that '${names[i]}' be a string, found: ${coerceForMessage(v)}`);
      }
      if (values.some(isNullish)) return null;
      const [s, f, r] = values as [string, string, string];
      return all ? s.split(f).join(r) : s.replace(f, () => r);
    };
  };
}

function stringCaseCompare(a: string, b: string): number {
  const x = asciiUpper(a);
  const y = asciiUpper(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export const stringOperators: OperatorTable = {
  $concat: (args, p) => {
    const items = parseVariadic(args, p);
    return (ctx) => {
      let out = '';
      let sawNull = false;
      for (const item of items) {
        const v = item(ctx);
        if (isNullish(v)) sawNull = true;
        else if (typeof v !== 'string') fail(16702, `$concat only supports strings, not ${bsonTypeName(v)}`);
        else out += v;
      }
      return sawNull ? null : out;
    };
  },
  $substr: parseSubstrBytes,
  $substrBytes: parseSubstrBytes,
  $substrCP: parseSubstrCP,
  $toLower: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => asciiLower(coerceToString(arg(ctx), name));
  },
  $toUpper: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => asciiUpper(coerceToString(arg(ctx), name));
  },
  $strLenBytes: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => utf8(stringArg(name, 34473, arg(ctx))).length;
  },
  $strLenCP: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => Array.from(stringArg(name, 34471, arg(ctx))).length;
  },
  $strcasecmp: (args, p, name) => {
    const [left, right] = parseArgs(args, p, name, 2) as [Evaluator, Evaluator];
    return (ctx) => stringCaseCompare(coerceToString(left(ctx), name), coerceToString(right(ctx), name));
  },
  $split: parseSplit,
  $trim: parseTrim(true, true),
  $ltrim: parseTrim(true, false),
  $rtrim: parseTrim(false, true),
  $indexOfBytes: parseIndexOf('bytes'),
  $indexOfCP: parseIndexOf('cp'),
  $replaceOne: parseReplace(false),
  $replaceAll: parseReplace(true),
};
