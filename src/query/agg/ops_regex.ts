import { bsonTypeName } from '../../bson/compare.js';
import { bsonTag, isPlainObject, type BSONRegExp, type Doc } from '../../bson/values.js';
import { fail, isNullish, type Evaluator, type ExpressionParser, type OperatorTable } from './operator_support.js';

// $regexMatch, $regexFind and $regexFindAll. MongoDB uses PCRE; JS RegExp in unicode mode agrees
// on the common syntax. The 'x' option has no JS flag, so its whitespace and comments are removed
// from the pattern here.

const compiled = new Map<string, RegExp>();
const COMPILED_MAX = 1000;

function stripExtended(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++;
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return out;
}

export function compileRegex(pattern: string, options: string, opName: string): RegExp {
  const key = `${options}/${pattern}`;
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  let flags = 'g';
  let source = pattern;
  for (const o of options) {
    if (o === 'i' || o === 'm' || o === 's') flags += o;
    else if (o === 'x') source = stripExtended(source);
    else if (o !== 'u') fail(51108, `${opName} invalid flag in regex options: ${o}`);
  }
  let re: RegExp;
  try {
    re = new RegExp(source, flags + 'u');
  } catch {
    try {
      re = new RegExp(source, flags);
    } catch (err) {
      return fail(51111, `Invalid Regex in ${opName}: ${(err as Error).message}`);
    }
  }
  if (compiled.size >= COMPILED_MAX) compiled.clear();
  compiled.set(key, re);
  return re;
}

type Mode = 'match' | 'find' | 'findAll';

function codePointIndex(s: string, utf16Index: number): number {
  return Array.from(s.slice(0, utf16Index)).length;
}

function matchDoc(s: string, m: RegExpExecArray): Doc {
  return { match: m[0], idx: codePointIndex(s, m.index), captures: m.slice(1).map((c) => (c === undefined ? null : c)) };
}

function parseRegexOperator(mode: Mode) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    if (!isPlainObject(args)) fail(51103, `${name} expects an object of named arguments but found: ${bsonTypeName(args)}`);
    for (const key of Object.keys(args)) {
      if (key !== 'input' && key !== 'regex' && key !== 'options') fail(31024, `${name} found an unknown argument: ${key}`);
    }
    if (!('input' in args)) fail(31022, `${name} requires 'input' parameter`);
    if (!('regex' in args)) fail(31023, `${name} requires 'regex' parameter`);
    const inputArg = parser.parse(args.input);
    const regexArg = parser.parse(args.regex);
    const optionsArg = 'options' in args ? parser.parse(args.options) : undefined;
    const empty = mode === 'match' ? false : mode === 'find' ? null : [];
    return (ctx) => {
      const input = inputArg(ctx);
      const regex = regexArg(ctx);
      const options = optionsArg?.(ctx);
      if (!isNullish(options) && typeof options !== 'string') fail(51106, `${name} needs 'options' to be of type string`);
      let pattern: string;
      let flags = typeof options === 'string' ? options : '';
      if (bsonTag(regex) === 'BSONRegExp') {
        const r = regex as BSONRegExp;
        if (r.options !== '' && flags !== '') fail(51075, `${name}: regex option(s) specified in both 'regex' and 'option' fields`);
        pattern = r.pattern;
        flags = flags || r.options;
      } else if (typeof regex === 'string') {
        pattern = regex;
      } else if (isNullish(regex)) {
        return empty;
      } else {
        return fail(51105, `${name} needs 'regex' to be of type string or regex`);
      }
      if (pattern.includes('\0')) fail(51109, `${name}: regular expression cannot contain an embedded null byte`);
      if (isNullish(input)) return empty;
      if (typeof input !== 'string') fail(51104, `${name} needs 'input' to be of type string`);
      const re = compileRegex(pattern, flags, name);
      re.lastIndex = 0;
      if (mode === 'match') return re.exec(input) !== null;
      if (mode === 'find') {
        const m = re.exec(input);
        return m === null ? null : matchDoc(input, m);
      }
      const out: Doc[] = [];
      for (let m = re.exec(input); m !== null; m = re.exec(input)) {
        out.push(matchDoc(input, m));
        // An empty match must still advance, by one whole code point.
        if (m[0] === '') re.lastIndex = m.index + ((input.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1);
      }
      return out;
    };
  };
}

export const regexOperators: OperatorTable = {
  $regexMatch: parseRegexOperator('match'),
  $regexFind: parseRegexOperator('find'),
  $regexFindAll: parseRegexOperator('findAll'),
};
