import { EJSON } from 'bson';

// The unified test format's rules for comparing an expected value with an actual one
// ("Evaluating Matches"). Pure: entities are reached through MatchContext, and a mismatch is
// returned as a value describing where and why, never thrown.

export interface MatchContext {
  /** The value saved under an entity name, or an Error if there is none. */
  entity(name: string): unknown;
  /** The logical session id of a session entity, or an Error if there is none. */
  sessionLsid(name: string): unknown;
}

export interface Mismatch {
  path: string;
  message: string;
}

type Doc = Record<string, unknown>;

export const noEntities: MatchContext = {
  entity: (name) => new Error(`no entity named ${name}`),
  sessionLsid: (name) => new Error(`no session entity named ${name}`),
};

/** `root` lets the actual document carry keys the expected one does not mention. */
export function matchValue(expected: unknown, actual: unknown, root: boolean, ctx: MatchContext = noEntities): Mismatch | null {
  return match(expected, actual, root, ctx, '$');
}

/** The result of find, aggregate and the like: every element is a root-level document. */
export function matchDocuments(expected: unknown[], actual: unknown, ctx: MatchContext = noEntities): Mismatch | null {
  if (!Array.isArray(actual)) return typeMismatch('$', expected, actual);
  if (expected.length !== actual.length) return lengthMismatch('$', expected, actual);
  for (let i = 0; i < expected.length; i++) {
    const m = match(expected[i], actual[i], true, ctx, `$[${i}]`);
    if (m) return m;
  }
  return null;
}

/**
 * Collection contents after a test: no special operators and no extra keys at any depth,
 * but key order and numeric type may differ.
 */
export function matchExactly(expected: unknown, actualValue: unknown, path = '$'): Mismatch | null {
  const actual = plain(actualValue);
  if (isDocument(expected)) {
    if (!isDocument(actual)) return typeMismatch(path, expected, actual);
    for (const key of Object.keys(expected)) {
      if (!hasKey(actual, key)) return { path: `${path}.${key}`, message: 'missing' };
      const m = matchExactly(expected[key], actual[key], `${path}.${key}`);
      if (m) return m;
    }
    return extraKey(expected, actual, path);
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return typeMismatch(path, expected, actual);
    if (expected.length !== actual.length) return lengthMismatch(path, expected, actual);
    for (let i = 0; i < expected.length; i++) {
      const m = matchExactly(expected[i], actual[i], `${path}[${i}]`);
      if (m) return m;
    }
    return null;
  }
  return scalarsEqual(expected, actual) ? null : typeMismatch(path, expected, actual);
}

function match(expected: unknown, actualValue: unknown, root: boolean, ctx: MatchContext, path: string): Mismatch | null {
  const actual = plain(actualValue);
  if (isDocument(expected)) {
    const op = operatorOf(expected);
    if (op) return matchOperator(op, expected[op], actual, root, ctx, path);
    if (!isDocument(actual)) return typeMismatch(path, expected, actual);
    for (const key of Object.keys(expected)) {
      const m = matchKey(key, expected[key], actual, ctx, `${path}.${key}`);
      if (m) return m;
    }
    return root ? null : extraKey(expected, actual, path);
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return typeMismatch(path, expected, actual);
    if (expected.length !== actual.length) return lengthMismatch(path, expected, actual);
    for (let i = 0; i < expected.length; i++) {
      const m = match(expected[i], actual[i], false, ctx, `${path}[${i}]`);
      if (m) return m;
    }
    return null;
  }
  return scalarsEqual(expected, actual) ? null : typeMismatch(path, expected, actual);
}

/** Operators that decide on the presence of a key, not only on its value. */
function matchKey(key: string, expected: unknown, actual: Doc, ctx: MatchContext, path: string): Mismatch | null {
  const present = hasKey(actual, key);
  const op = isDocument(expected) ? operatorOf(expected) : undefined;
  if (op === '$$exists') {
    const want = Boolean(toNumberOrSelf((expected as Doc)[op]));
    return want === present ? null : { path, message: want ? 'missing' : `expected absent, got ${show(actual[key])}` };
  }
  if (op === '$$unsetOrMatches' && !present) return null;
  if (!present && op !== '$$type') return { path, message: `missing (expected ${show(expected)})` };
  return match(expected, actual[key], false, ctx, path);
}

function matchOperator(op: string, arg: unknown, actual: unknown, root: boolean, ctx: MatchContext, path: string): Mismatch | null {
  switch (op) {
    case '$$exists':
      return Boolean(toNumberOrSelf(arg)) === (actual !== undefined) ? null : { path, message: `$$exists ${show(arg)} failed` };
    case '$$unsetOrMatches':
      return actual === undefined ? null : match(arg, actual, root, ctx, path);
    case '$$type': {
      const types = Array.isArray(arg) ? (arg as string[]) : [arg as string];
      if (actual === undefined) return { path, message: `missing (expected type ${types.join('|')})` };
      return types.some((t) => hasType(actual, t)) ? null : { path, message: `expected type ${types.join('|')}, got ${show(actual)}` };
    }
    case '$$matchesEntity': {
      const value = ctx.entity(String(arg));
      if (value instanceof Error) return { path, message: value.message };
      return match(value, actual, root, ctx, path);
    }
    case '$$sessionLsid': {
      const lsid = ctx.sessionLsid(String(arg));
      if (lsid instanceof Error) return { path, message: lsid.message };
      return matchExactly(lsid, actual, path) ? { path, message: `expected lsid of ${String(arg)}, got ${show(actual)}` } : null;
    }
    case '$$matchesHexBytes':
      return matchHexBytes(String(arg), actual, path);
    case '$$lte': {
      const a = numeric(actual);
      const e = numeric(arg);
      if (a === undefined || e === undefined) return typeMismatch(path, arg, actual);
      return a <= e ? null : { path, message: `expected <= ${show(arg)}, got ${show(actual)}` };
    }
    case '$$matchAsDocument': {
      if (typeof actual !== 'string') return { path, message: `$$matchAsDocument needs a string, got ${show(actual)}` };
      return match(arg, EJSON.parse(actual, { relaxed: false }), false, ctx, path);
    }
    case '$$matchAsRoot':
      return match(arg, actual, true, ctx, path);
    default:
      return { path, message: `unknown special operator ${op}` };
  }
}

/** The driver builds some command fields (a find's sort) as a Map, which is a document too. */
function plain(v: unknown): unknown {
  return v instanceof Map ? Object.fromEntries(v) : v;
}

function operatorOf(doc: Doc): string | undefined {
  const keys = Object.keys(doc);
  return keys.length === 1 && keys[0].startsWith('$$') ? keys[0] : undefined;
}

function matchHexBytes(hex: string, actual: unknown, path: string): Mismatch | null {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) return { path, message: `malformed $$matchesHexBytes ${hex}` };
  const bytes = bytesOf(actual);
  if (!bytes) return typeMismatch(path, hex, actual);
  return Buffer.from(bytes).toString('hex') === hex.toLowerCase() ? null : { path, message: `expected bytes ${hex}, got ${Buffer.from(bytes).toString('hex')}` };
}

function bytesOf(v: unknown): Uint8Array | undefined {
  if (v instanceof Uint8Array) return v;
  if (tagOf(v) === 'Binary') return (v as { buffer: Uint8Array }).buffer;
  if (typeof v === 'string') return Buffer.from(v, 'latin1');
  return undefined;
}

// ---- types and scalars -------------------------------------------------------------------

function tagOf(v: unknown): string | undefined {
  return v !== null && typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : undefined;
}

/** A document in the format's sense: a JS object that is not an array or a BSON value. */
export function isDocument(v: unknown): v is Doc {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  if (v instanceof Date || v instanceof RegExp || v instanceof Uint8Array) return false;
  return tagOf(v) === undefined;
}

function hasKey(doc: Doc, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(doc, key) && doc[key] !== undefined;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * The driver promotes int32, int64 and double to JS numbers, so a plain number's BSON type is
 * unknown: it is accepted for every numeric type its value could have had.
 */
function hasType(v: unknown, type: string): boolean {
  const tag = tagOf(v);
  switch (type) {
    case 'number':
      return hasType(v, 'int') || hasType(v, 'long') || hasType(v, 'double') || hasType(v, 'decimal');
    case 'double':
      return typeof v === 'number' || tag === 'Double';
    case 'int':
      return tag === 'Int32' || (typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX);
    case 'long':
      return tag === 'Long' || typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
    case 'decimal':
      return tag === 'Decimal128';
    case 'string':
      return typeof v === 'string';
    case 'object':
      return isDocument(v);
    case 'array':
      return Array.isArray(v);
    case 'binData':
      return tag === 'Binary' || v instanceof Uint8Array;
    case 'undefined':
      return v === undefined;
    case 'objectId':
      return tag === 'ObjectId';
    case 'bool':
      return typeof v === 'boolean';
    case 'date':
      return v instanceof Date;
    case 'null':
      return v === null;
    case 'regex':
      return v instanceof RegExp || tag === 'BSONRegExp';
    case 'dbPointer':
      return tag === 'DBPointer' || tag === 'DBRef';
    case 'javascript':
      return tag === 'Code' && (v as { scope?: unknown }).scope == null;
    case 'javascriptWithScope':
      return tag === 'Code' && (v as { scope?: unknown }).scope != null;
    case 'symbol':
      return tag === 'BSONSymbol' || tag === 'Symbol';
    case 'timestamp':
      return tag === 'Timestamp';
    case 'minKey':
      return tag === 'MinKey';
    case 'maxKey':
      return tag === 'MaxKey';
    default:
      return false;
  }
}

/** int32, int64 and double as one number line; Decimal128 stays apart, as the spec says. */
function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  const tag = tagOf(v);
  if (tag === 'Int32' || tag === 'Double') return (v as { value: number }).value;
  if (tag === 'Long') return BigInt((v as { toString(): string }).toString());
  return undefined;
}

function numbersEqual(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || (Number.isNaN(a) && Number.isNaN(b));
  if (typeof a === 'number' && !Number.isInteger(a)) return false;
  if (typeof b === 'number' && !Number.isInteger(b)) return false;
  return BigInt(a) === BigInt(b);
}

function toNumberOrSelf(v: unknown): unknown {
  const n = numeric(v);
  return n === undefined ? v : Number(n);
}

function scalarsEqual(expected: unknown, actual: unknown): boolean {
  const e = numeric(expected);
  const a = numeric(actual);
  if (e !== undefined || a !== undefined) return e !== undefined && a !== undefined && numbersEqual(e, a);
  if (expected === null || expected === undefined || typeof expected !== 'object') return expected === actual;
  if (expected instanceof Date) return actual instanceof Date && expected.getTime() === actual.getTime();
  if (expected instanceof RegExp || tagOf(expected) === 'BSONRegExp') return regexEqual(expected, actual);
  const eBytes = bytesOfBinary(expected);
  if (eBytes) {
    const aBytes = bytesOfBinary(actual);
    return aBytes !== undefined && eBytes.subtype === aBytes.subtype && Buffer.compare(eBytes.bytes, aBytes.bytes) === 0;
  }
  const tag = tagOf(expected);
  if (tag !== tagOf(actual)) return false;
  switch (tag) {
    case 'Code': {
      const [ec, ac] = [expected as { code: string; scope?: unknown }, actual as { code: string; scope?: unknown }];
      return ec.code === ac.code && (ec.scope == null ? ac.scope == null : matchExactly(ec.scope, ac.scope) === null);
    }
    case 'DBRef': {
      const [er, ar] = [expected as { collection: string; oid: unknown; db?: string }, actual as { collection: string; oid: unknown; db?: string }];
      return er.collection === ar.collection && er.db === ar.db && matchExactly(er.oid, ar.oid) === null;
    }
    case 'MinKey':
    case 'MaxKey':
      return true;
    default:
      // ObjectId, Decimal128, Timestamp, BSONSymbol: their canonical Extended JSON says it all.
      return EJSON.stringify(expected as never, { relaxed: false }) === EJSON.stringify(actual as never, { relaxed: false });
  }
}

function regexEqual(expected: unknown, actual: unknown): boolean {
  const norm = (v: unknown): string | undefined => {
    if (v instanceof RegExp) return `${v.source}/${[...v.flags].sort().join('')}`;
    if (tagOf(v) === 'BSONRegExp') {
      const r = v as { pattern: string; options: string };
      return `${r.pattern}/${[...r.options].sort().join('')}`;
    }
    return undefined;
  };
  return norm(expected) !== undefined && norm(expected) === norm(actual);
}

/** The driver returns subtype-0 binary as Binary, but user code may hand us a Buffer. */
function bytesOfBinary(v: unknown): { subtype: number; bytes: Uint8Array } | undefined {
  if (v instanceof Uint8Array) return { subtype: 0, bytes: v };
  if (tagOf(v) === 'Binary') {
    const b = v as { sub_type: number; buffer: Uint8Array; position: number };
    return { subtype: b.sub_type, bytes: b.buffer.subarray(0, b.position) };
  }
  return undefined;
}

// ---- reporting ---------------------------------------------------------------------------

function extraKey(expected: Doc, actual: Doc, path: string): Mismatch | null {
  const extra = Object.keys(actual).find((k) => actual[k] !== undefined && !Object.prototype.hasOwnProperty.call(expected, k));
  return extra === undefined ? null : { path: `${path}.${extra}`, message: `unexpected key (value ${show(actual[extra])})` };
}

function typeMismatch(path: string, expected: unknown, actual: unknown): Mismatch {
  return { path, message: `expected ${show(expected)}, got ${show(actual)}` };
}

function lengthMismatch(path: string, expected: unknown[], actual: unknown[]): Mismatch {
  return { path, message: `expected ${expected.length} elements, got ${actual.length}: ${show(actual)}` };
}

const SHOW_CHARS_MAX = 300;

/** Relaxed Extended JSON, cut short: enough to recognise a value in a one-line report. */
export function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  let text: string;
  try {
    text = EJSON.stringify(v as never, { relaxed: true });
  } catch {
    text = String(v);
  }
  return text.length > SHOW_CHARS_MAX ? `${text.slice(0, SHOW_CHARS_MAX)}...` : text;
}

export function describe(m: Mismatch): string {
  return `${m.path}: ${m.message}`;
}
