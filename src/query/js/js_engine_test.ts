import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Code, Decimal128, Double, Long, ObjectId, Timestamp } from 'bson';
import { withDeadline } from '../../base/operation_deadline.js';
import { codeText, ScriptFunction } from './js_function.js';
import { reduceResults, runMapReduce } from './map_reduce.js';
import { configureScripting, scriptSettings, takeScriptParameters } from './script_settings.js';

const DEFAULTS = { ...scriptSettings() };

function fails(work: () => unknown, code: number, message?: RegExp): void {
  assert.throws(work, (err: { code: number; message: string }) => {
    assert.equal(err.code, code, err.message);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });
}

describe('the script engine', () => {
  afterEach(() => configureScripting(DEFAULTS));

  it('hands a script the shell types of BSON values and reads back what it returns', () => {
    const id = new ObjectId();
    const fn = new ScriptFunction(`function(id, n, l, d, when, ts, bin, dec, doc) {
      return {
        id: [id.str, id.toString(), id.equals(ObjectId(id.str)), id instanceof ObjectId],
        n: [typeof n, n + 1], l: [l instanceof NumberLong, l + 1, l.toString()], d: [typeof d, d * 2],
        when: [when instanceof Date, when.getUTCFullYear()], ts: [ts.t, ts.i], bin: [bin.subtype(), bin.base64],
        dec: dec.toString(), doc: doc.a.b[1],
        back: [id, l, new Date(0), NumberInt(4), ts, bin, dec],
      };
    }`);
    const out = fn.apply({}, [id, 5, Long.fromNumber(7), new Double(1.5), new Date('2024-02-03T00:00:00Z'), new Timestamp({ t: 9, i: 2 }),
      new Binary(Buffer.from('hi'), 0), Decimal128.fromString('1.25'), { a: { b: [1, 'two'] } }]) as Record<string, unknown[]>;
    assert.deepEqual(out.id, [id.toHexString(), `ObjectId("${id.toHexString()}")`, true, true]);
    assert.deepEqual(out.n, ['number', new Double(6)], 'a number comes back a double, as in MongoDB');
    assert.deepEqual(out.l, [true, new Double(8), 'NumberLong(7)']);
    assert.deepEqual(out.d, ['number', new Double(3)]);
    assert.deepEqual(out.when, [true, new Double(2024)]);
    assert.deepEqual(out.ts, [new Double(9), new Double(2)]);
    assert.deepEqual(out.bin, [new Double(0), 'aGk=']);
    assert.equal(out.dec, 'NumberDecimal("1.25")');
    assert.equal(out.doc, 'two');
    assert.deepEqual(out.back, [id, Long.fromNumber(7), new Date(0), 4, new Timestamp({ t: 9, i: 2 }), new Binary(Buffer.from('hi'), 0), Decimal128.fromString('1.25')]);
  });

  it("takes code as a function's source, an expression or statements, and as BSON code", () => {
    assert.deepEqual(new ScriptFunction('this.a + 1').apply({ a: 1 }, []), new Double(2));
    assert.deepEqual(new ScriptFunction('var x = this.a; return x * 3').apply({ a: 2 }, []), new Double(6));
    assert.deepEqual(new ScriptFunction('(a, b) => a - b').apply({}, [5, 2]), new Double(3));
    assert.equal(codeText(new Code('function() {}')), 'function() {}');
    assert.equal(codeText(5), undefined);
    assert.equal(new ScriptFunction('this.a == 1 && obj.a == 1').test({ a: 1 }), true);
  });

  it('stops a script that runs past internalQueryJavaScriptFnTimeoutMillis (139) or past maxTimeMS (50), and runs the next', () => {
    configureScripting({ timeoutMillis: 100 });
    fails(() => new ScriptFunction('while (true) {}').test({}), 139, /JavaScript execution interrupted/);
    configureScripting({ timeoutMillis: 60_000 });
    fails(() => withDeadline(performance.now() + 100, () => new ScriptFunction('for (;;) {}').test({})), 50);
    assert.deepEqual(new ScriptFunction('function(a) { return a * 2; }').apply({}, [21]), new Double(42));
  });

  it('replaces the isolate, or the script host V8 aborted, of a script that exhausted internalQueryJavaScriptHeapSizeLimitMB (139), and runs the next', () => {
    configureScripting({ heapLimitMB: 16 });
    fails(() => new ScriptFunction('function() { const a = []; for (;;) a.push(new Array(1e6).fill(Math.random())); }').apply({}, []), 139, /Out of memory/);
    // Allocations V8 answers by aborting its process: the script host dies, not this process.
    fails(() => new ScriptFunction('function() { return new Array(5e7).fill(1.5).length; }').apply({}, []), 139, /Out of memory/);
    fails(() => new ScriptFunction('function() { const m = new Map(); for (let i = 0; ; i++) m.set(i, i); }').apply({}, []), 139, /Out of memory/);
    assert.equal(new ScriptFunction('function(s) { return s.toUpperCase(); }').apply({}, ['ok']), 'OK');
  });

  it("answers a script's own errors as JSInterpreterFailure", () => {
    fails(() => new ScriptFunction('function( {').apply({}, []), 139, /^SyntaxError: /);
    fails(() => new ScriptFunction('function() { throw new Error("no luck"); }').apply({}, []), 139, /^Error: no luck$/);
    fails(() => new ScriptFunction('function() { return undefinedName; }').apply({}, []), 139, /^ReferenceError: /);
  });

  it("reduces mapReduce's emitted values per key, leaves single values unreduced, and finalizes with the scope's globals", () => {
    const scripts = {
      map: 'function() { emit(this.k, this.v); }',
      reduce: 'function(k, vs) { return Array.sum(vs) + bonus; }',
      finalize: 'function(k, v) { return { k: k, v: v }; }',
      scope: { bonus: 100 },
    };
    const docs = [{ k: 'a', v: 1 }, { k: 'b', v: 2 }, { k: 'a', v: 3 }];
    assert.deepEqual(runMapReduce(scripts, docs, { finalize: true }), [
      { _id: 'a', value: { k: 'a', v: new Double(104) } },
      { _id: 'b', value: { k: 'b', v: new Double(2) } },
    ]);
    const partial = runMapReduce(scripts, docs, { finalize: false });
    assert.deepEqual(partial, [{ _id: 'a', value: new Double(104) }, { _id: 'b', value: new Double(2) }], 'a single value is not reduced (its 100 is not added)');
    assert.deepEqual(reduceResults(scripts, [...partial, { _id: 'b', value: 5 }]), [
      { _id: 'a', value: { k: 'a', v: new Double(104) } },
      { _id: 'b', value: { k: 'b', v: new Double(107) } },
    ]);
    assert.equal(new ScriptFunction('function() { return typeof bonus; }').apply({}, []), 'undefined', "a mapReduce's scope stays in its own context");
  });

  it('runs no script in a process that runs none itself (a router)', () => {
    configureScripting({ local: false });
    assert.throws(() => new ScriptFunction('function() { return 1; }').apply({}, []), /a router runs no script/);
  });

  it('reads the limits from --setParameter and refuses a bad value', () => {
    assert.deepEqual(takeScriptParameters(['internalQueryJavaScriptFnTimeoutMillis=5', 'ttlMonitorSleepSecs=2', 'internalQueryJavaScriptHeapSizeLimitMB=64']),
      { rest: ['ttlMonitorSleepSecs=2'], limits: { timeoutMillis: 5, heapLimitMB: 64 } });
    assert.throws(() => takeScriptParameters(['internalQueryJavaScriptFnTimeoutMillis=0']), /Bad value/);
  });
});
