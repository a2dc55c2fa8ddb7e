import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';

// MongoDB evaluates regular expressions with PCRE in UTF-8 mode. JavaScript's engine differs in
// anchors, `.`, `\s`, escapes and inline flags, so patterns are translated to an equivalent JS
// RegExp (always with the `u` flag, so that `.` and classes see code points as PCRE does).

const VALID_FLAGS = new Set(['i', 'm', 's', 'x', 'u']);

// Characters that must stay escaped for a `u`-mode RegExp; any other escaped punctuation is
// emitted as a code-point escape, since PCRE accepts `\` before every non-alphanumeric.
const SYNTAX = new Set(['^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/']);

const POSIX_CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z', digit: '0-9', alnum: 'a-zA-Z0-9', upper: 'A-Z', lower: 'a-z', space: '\\t\\n\\v\\f\\r ',
  blank: ' \\t', punct: '!-\\/:-@\\[-`{-~', xdigit: '0-9A-Fa-f', word: '\\w', cntrl: '\\x00-\\x1f\\x7f',
  print: ' -~', graph: '!-~',
};

const START = '(?<![\\s\\S])';
const END = '(?![\\s\\S])';
const END_OR_FINAL_NEWLINE = '(?=\\n?(?![\\s\\S]))';
const PCRE_SPACE = '\\t\\n\\v\\f\\r ';

export function validateRegexFlags(flags: string): void {
  for (const flag of flags) {
    if (!VALID_FLAGS.has(flag)) throw new MongoError(51108, `invalid flag in regex options: ${flag}`);
  }
}

export function compileRegex(pattern: string, flags: string): RegExp {
  validateRegexFlags(flags);
  if (pattern.includes('\0')) throw new MongoError(ErrorCodes.BadValue, 'Regular expression cannot contain an embedded null byte');
  let options = new Set(flags);
  let body = pattern;
  // Leading inline options such as (?i) or (?si) apply to the whole pattern.
  for (let m = /^\(\?([imsx]+)\)/.exec(body); m !== null; m = /^\(\?([imsx]+)\)/.exec(body)) {
    options = new Set([...options, ...m[1]!]);
    body = body.slice(m[0].length);
  }
  try {
    const source = translate(body, options.has('m'), options.has('s'), options.has('x'));
    return new RegExp(source, `u${options.has('i') ? 'i' : ''}${options.has('s') ? 's' : ''}`);
  } catch (err) {
    throw new MongoError(51091, `Regular expression is invalid: ${(err as Error).message}`);
  }
}

function translate(pattern: string, multiline: boolean, dotAll: boolean, extended: boolean): string {
  let out = '';
  let inClass = false;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      const [text, next] = translateEscape(pattern, i, inClass);
      out += text;
      i = next;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      if (c === '[' && pattern[i + 1] === ':') {
        const close = pattern.indexOf(':]', i + 2);
        const name = close === -1 ? undefined : pattern.slice(i + 2, close);
        const negated = name?.startsWith('^') === true;
        const cls = name === undefined ? undefined : POSIX_CLASSES[negated ? name.slice(1) : name];
        if (cls !== undefined && !negated) {
          out += cls;
          i = close + 2;
          continue;
        }
      }
      out += c === '[' ? '\\[' : c;
      i++;
      continue;
    }
    if (extended && /\s/.test(c)) {
      i++;
      continue;
    }
    if (extended && c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++;
      continue;
    }
    switch (c) {
      case '[':
        inClass = true;
        out += c;
        if (pattern[i + 1] === '^') { out += '^'; i++; }
        // A `]` right after the opening bracket is a literal in PCRE.
        if (pattern[i + 1] === ']') { out += '\\]'; i++; }
        break;
      case '.':
        out += dotAll ? '.' : '[^\\n]';
        break;
      case '^':
        out += multiline ? '(?:(?<![\\s\\S])|(?<=\\n)(?=[\\s\\S]))' : START;
        break;
      case '$':
        out += multiline ? '(?=\\n|(?![\\s\\S]))' : END_OR_FINAL_NEWLINE;
        break;
      case '(':
        if (pattern.startsWith('(?P<', i)) { out += '(?<'; i += 4; continue; }
        if (pattern.startsWith('(?P=', i)) {
          const close = pattern.indexOf(')', i);
          out += `\\k<${pattern.slice(i + 4, close)}>`;
          i = close + 1;
          continue;
        }
        if (pattern.startsWith('(?#', i)) { i = pattern.indexOf(')', i) + 1 || pattern.length; continue; }
        out += c;
        break;
      case '{': {
        const quantifier = /^\{\d+(,\d*)?\}/.exec(pattern.slice(i));
        if (quantifier !== null) { out += quantifier[0]; i += quantifier[0].length; continue; }
        out += '\\{';
        break;
      }
      case '}': case ']':
        out += `\\${c}`;
        break;
      default:
        out += c;
    }
    i++;
  }
  return out;
}

function translateEscape(pattern: string, i: number, inClass: boolean): [string, number] {
  const c = pattern[i + 1];
  if (c === undefined) throw new Error('\\ at end of pattern');
  switch (c) {
    case 'A': return [inClass ? 'A' : START, i + 2];
    case 'z': return [inClass ? 'z' : END, i + 2];
    case 'Z': return [inClass ? 'Z' : END_OR_FINAL_NEWLINE, i + 2];
    case 's': return [inClass ? PCRE_SPACE : `[${PCRE_SPACE}]`, i + 2];
    case 'S': return [inClass ? '\\S' : `[^${PCRE_SPACE}]`, i + 2];
    case 'h': return [inClass ? ' \\t\\xa0' : '[ \\t\\xa0]', i + 2];
    case 'Q': {
      const end = pattern.indexOf('\\E', i + 2);
      const literal = pattern.slice(i + 2, end === -1 ? pattern.length : end);
      return [[...literal].map((ch) => escapeLiteral(ch, inClass)).join(''), end === -1 ? pattern.length : end + 2];
    }
    case 'E': return ['', i + 2];
    case 'x': {
      const braced = /^\{([0-9a-fA-F]+)\}/.exec(pattern.slice(i + 2));
      if (braced !== null) return [`\\u{${braced[1]}}`, i + 2 + braced[0].length];
      break;
    }
    default: break;
  }
  if (/[0-9a-zA-Z]/.test(c)) return [`\\${c}`, i + 2];
  const cp = pattern.codePointAt(i + 1)!;
  return [escapeLiteral(String.fromCodePoint(cp), inClass), i + 1 + (cp > 0xffff ? 2 : 1)];
}

function escapeLiteral(ch: string, inClass: boolean): string {
  if (SYNTAX.has(ch) || (inClass && ch === '-')) return `\\${ch}`;
  if (/[0-9a-zA-Z_]/.test(ch)) return ch;
  return `\\u{${ch.codePointAt(0)!.toString(16)}}`;
}
