// The JavaScript each script context starts with: the types MongoDB's shell gives scripts for BSON
// values that plain JavaScript lacks (ObjectId, NumberLong, NumberInt, NumberDecimal, Timestamp,
// BinData, MinKey, MaxKey), and the two halves of the crossing. Values cross the isolate's
// boundary as canonical Extended JSON text (bson's EJSON, relaxed: false): `__fromEJSON` revives it
// into what MongoDB's shell shows a script (an int32 or a double as a number, a date as a Date,
// an int64 as a NumberLong, ...), `__toEJSON` writes a script's values back (a number is a double,
// as MongoDB reads every JavaScript number back). Run once per context, as source text: it is
// code of the isolate, not of this process.
export const SHELL_PRELUDE = String.raw`
'use strict';
const hex = (n, width) => n.toString(16).padStart(width, '0');
globalThis.ObjectId = function ObjectId(str) {
  if (!(this instanceof ObjectId)) return new ObjectId(str);
  if (str === undefined) {
    str = hex(Math.floor(Date.now() / 1000), 8);
    for (let i = 0; i < 16; i++) str += hex(Math.floor(Math.random() * 16), 1);
  }
  if (typeof str !== 'string' || !/^[0-9a-fA-F]{24}$/.test(str)) throw new Error('invalid object id: length');
  this.str = str.toLowerCase();
};
ObjectId.prototype.toString = function () { return 'ObjectId("' + this.str + '")'; };
ObjectId.prototype.tojson = ObjectId.prototype.toString;
ObjectId.prototype.valueOf = function () { return this.str; };
ObjectId.prototype.toHexString = function () { return this.str; };
ObjectId.prototype.equals = function (other) { return other instanceof ObjectId && other.str === this.str; };
ObjectId.prototype.getTimestamp = function () { return new Date(parseInt(this.str.slice(0, 8), 16) * 1000); };

globalThis.NumberLong = function NumberLong(v) {
  if (!(this instanceof NumberLong)) return new NumberLong(v);
  this.text = v === undefined ? '0' : String(typeof v === 'number' ? Math.trunc(v) : v);
  this.floatApprox = Number(this.text);
};
NumberLong.prototype.valueOf = function () { return this.floatApprox; };
NumberLong.prototype.toNumber = NumberLong.prototype.valueOf;
NumberLong.prototype.toString = function () { return 'NumberLong(' + this.text + ')'; };
NumberLong.prototype.equals = function (other) { return other instanceof NumberLong && other.text === this.text; };

globalThis.NumberInt = function NumberInt(v) {
  if (!(this instanceof NumberInt)) return new NumberInt(v);
  this.value = v === undefined ? 0 : Number(v) | 0;
};
NumberInt.prototype.valueOf = function () { return this.value; };
NumberInt.prototype.toNumber = NumberInt.prototype.valueOf;
NumberInt.prototype.toString = function () { return 'NumberInt(' + this.value + ')'; };

globalThis.NumberDecimal = function NumberDecimal(v) {
  if (!(this instanceof NumberDecimal)) return new NumberDecimal(v);
  this.text = v === undefined ? '0' : String(v);
};
NumberDecimal.prototype.valueOf = function () { return Number(this.text); };
NumberDecimal.prototype.toString = function () { return 'NumberDecimal("' + this.text + '")'; };

globalThis.Timestamp = function Timestamp(t, i) {
  if (!(this instanceof Timestamp)) return new Timestamp(t, i);
  this.t = t || 0;
  this.i = i || 0;
};
Timestamp.prototype.getTime = function () { return this.t; };
Timestamp.prototype.getInc = function () { return this.i; };
Timestamp.prototype.toString = function () { return 'Timestamp(' + this.t + ', ' + this.i + ')'; };

globalThis.BinData = function BinData(subtype, base64) {
  if (!(this instanceof BinData)) return new BinData(subtype, base64);
  this.type = subtype;
  this.base64 = base64;
};
BinData.prototype.subtype = function () { return this.type; };
BinData.prototype.toString = function () { return 'BinData(' + this.type + ',"' + this.base64 + '")'; };
BinData.prototype.length = function () { return Math.floor(this.base64.replace(/=+$/, '').length * 3 / 4); };

// The shell's Array helpers that scripts use (mapReduce's reduce functions sum with Array.sum).
Array.sum = (values) => values.reduce((a, b) => a + b, 0);
Array.avg = (values) => (values.length === 0 ? null : Array.sum(values) / values.length);
Array.contains = (values, x) => values.indexOf(x) >= 0;
Array.unique = (values) => values.filter((x, i) => values.indexOf(x) === i);

globalThis.MinKey = function MinKey() { if (!(this instanceof MinKey)) return new MinKey(); };
globalThis.MaxKey = function MaxKey() { if (!(this instanceof MaxKey)) return new MaxKey(); };

const revive = (v) => {
  if (Array.isArray(v)) return v.map(revive);
  if (v === null || typeof v !== 'object') return v;
  if ('$numberInt' in v) return Number(v.$numberInt);
  if ('$numberDouble' in v) return Number(v.$numberDouble);
  if ('$numberLong' in v) return new NumberLong(v.$numberLong);
  if ('$numberDecimal' in v) return new NumberDecimal(v.$numberDecimal);
  if ('$oid' in v) return new ObjectId(v.$oid);
  if ('$date' in v) return new Date(Number(v.$date.$numberLong));
  if ('$timestamp' in v) return new Timestamp(v.$timestamp.t, v.$timestamp.i);
  if ('$binary' in v) return new BinData(Number.parseInt(v.$binary.subType, 16), v.$binary.base64);
  if ('$regularExpression' in v) return new RegExp(v.$regularExpression.pattern, v.$regularExpression.options.replace(/[^gimsuy]/g, ''));
  if ('$minKey' in v) return new MinKey();
  if ('$maxKey' in v) return new MaxKey();
  if ('$undefined' in v) return undefined;
  if ('$code' in v) return v.$code;
  if ('$symbol' in v) return v.$symbol;
  const out = {};
  for (const k of Object.keys(v)) out[k] = revive(v[k]);
  return out;
};
globalThis.__fromEJSON = (text) => revive(JSON.parse(text));

const write = (v) => {
  if (v === undefined) return null;
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return { $numberDouble: Number.isFinite(v) ? String(v) : (Number.isNaN(v) ? 'NaN' : (v > 0 ? 'Infinity' : '-Infinity')) };
  if (typeof v === 'bigint') return { $numberLong: String(v) };
  if (typeof v === 'function') return { $code: String(v) };
  if (typeof v === 'symbol') return { $symbol: String(v.description) };
  if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : write(x)));
  if (v instanceof Date) return { $date: { $numberLong: String(v.getTime()) } };
  if (v instanceof ObjectId) return { $oid: v.str };
  if (v instanceof NumberLong) return { $numberLong: v.text };
  if (v instanceof NumberInt) return { $numberInt: String(v.value) };
  if (v instanceof NumberDecimal) return { $numberDecimal: v.text };
  if (v instanceof Timestamp) return { $timestamp: { t: v.t, i: v.i } };
  if (v instanceof BinData) return { $binary: { base64: v.base64, subType: hex(v.type, 2) } };
  if (v instanceof RegExp) return { $regularExpression: { pattern: v.source, options: v.flags.replace(/[gy]/g, '') } };
  if (v instanceof MinKey) return { $minKey: 1 };
  if (v instanceof MaxKey) return { $maxKey: 1 };
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return write(v.valueOf());
  const out = {};
  for (const k of Object.keys(v)) if (v[k] !== undefined && typeof v[k] !== 'function') out[k] = write(v[k]);
  return out;
};
globalThis.__toEJSON = (v) => JSON.stringify(write(v));

// A function from MongoDB's forms of code: a function's source, or statements and expressions
// that become a function's body (an expression's value is its result, as $where's strings rely on).
const compile = (source) => {
  const text = source.trim();
  if (/^(async\s+)?function\b/.test(text) || /^(\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>/.test(text)) {
    return (0, eval)('(' + text + '\n)');
  }
  try {
    return (0, eval)('(function () { return (' + text + '\n); })');
  } catch (e) {
    return (0, eval)('(function () {' + text + '\n})');
  }
};
const functions = [];
globalThis.__compile = (source) => {
  const fn = compile(source);
  if (typeof fn !== 'function') throw new TypeError('not a function: ' + source);
  return functions.push(fn) - 1;
};
globalThis.__call = (id, thisText, argsText) =>
  __toEJSON(functions[id].apply(__fromEJSON(thisText), __fromEJSON(argsText)));

// $where's: the document is both \`this\` and the global \`obj\`.
globalThis.__where = (id, docText) => {
  const doc = __fromEJSON(docText);
  globalThis.obj = doc;
  return !!functions[id].call(doc);
};

// $accumulator's accumulate over a batch of documents' arguments, in one call, as MongoDB batches
// them: the state crosses the boundary once per batch.
globalThis.__accumulate = (id, stateText, inputsText) => {
  const fn = functions[id];
  let state = __fromEJSON(stateText);
  for (const input of __fromEJSON(inputsText)) state = fn(state, ...input);
  return __toEJSON(state);
};

// mapReduce's map over a batch of documents: the pairs they emit.
let emitted = null;
globalThis.emit = (key, value) => {
  if (emitted === null) throw new Error('emit called outside of a map function');
  emitted.push({ k: key, v: value });
};
globalThis.__map = (id, docsText) => {
  emitted = [];
  try {
    for (const doc of __fromEJSON(docsText)) functions[id].call(doc);
    return __toEJSON(emitted);
  } finally {
    emitted = null;
  }
};
globalThis.__setScope = (scopeText) => {
  const scope = __fromEJSON(scopeText);
  for (const k of Object.keys(scope)) globalThis[k] = scope[k];
};
`;
