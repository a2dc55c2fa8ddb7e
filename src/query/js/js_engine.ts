import { createHash } from 'node:crypto';
import ivm from 'isolated-vm';
import { EJSON } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { currentDeadline, maxTimeExpired } from '../../base/operation_deadline.js';
import { deserializeDocument, serializeDocument, type Doc } from '../../bson/values.js';
import { scriptSettings } from './script_settings.js';
import { SHELL_PRELUDE } from './shell_prelude.js';

// The process's one V8 isolate (isolated-vm: its own heap, stopped from outside when its time is
// up, unlike node:vm), reused by every script, and replaced when a script exhausted its heap (V8
// disposes of an isolate that did). Each evaluation runs synchronously, within MongoDB's limits:
// the time left of internalQueryJavaScriptFnTimeoutMillis and of the operation's maxTimeMS,
// whichever ends first. A script runs in a context: the shared one (functions of $where,
// $function, $accumulator) or one of its own (a mapReduce, whose scope becomes its globals).

let isolate: ivm.Isolate | undefined;
let isolateHeapMB = 0;
// Bumped with each new isolate: a context or function handle of an older one is gone.
let generation = 0;
let shared: ScriptContext | undefined;

function currentIsolate(): ivm.Isolate {
  const { heapLimitMB, local } = scriptSettings();
  if (!local) throw new MongoError(ErrorCodes.InternalError, 'a router runs no script: it has a shard run it');
  if (isolate === undefined || isolate.isDisposed || isolateHeapMB !== heapLimitMB) {
    if (isolate !== undefined && !isolate.isDisposed) isolate.dispose();
    isolate = new ivm.Isolate({ memoryLimit: heapLimitMB });
    isolateHeapMB = heapLimitMB;
    generation++;
    shared = undefined;
  }
  return isolate;
}

// A context of the isolate with the shell's types in it, and the functions compiled into it.
export class ScriptContext {
  private readonly context: ivm.Context;
  private readonly generation: number;
  private readonly compiled = new Map<string, number>();
  private readonly entries = new Map<string, ivm.Reference<(...a: unknown[]) => unknown>>();

  constructor() {
    const owner = currentIsolate();
    this.generation = generation;
    this.context = owner.createContextSync();
    this.context.global.setSync('globalThis', this.context.global.derefInto());
    // The shell's hex_md5, which MongoDB's scripts may call (its manual's $where example does).
    this.context.global.setSync('hex_md5', new ivm.Callback((text: unknown) => createHash('md5').update(String(text)).digest('hex')));
    this.run(() => this.context.evalSync(SHELL_PRELUDE, { timeout: this.timeout() }));
  }

  get alive(): boolean {
    return this.generation === generation && isolate !== undefined && !isolate.isDisposed;
  }

  release(): void {
    if (this.alive) this.context.release();
  }

  // The id of `source` compiled as a function in this context (once per source).
  compile(source: string): number {
    let id = this.compiled.get(source);
    if (id === undefined) {
      id = this.call<number>('__compile', [source]);
      this.compiled.set(source, id);
    }
    return id;
  }

  // Calls one of the prelude's entry points with plain arguments (numbers, strings).
  call<T>(entry: string, args: unknown[]): T {
    if (!this.alive) throw new MongoError(ErrorCodes.JSInterpreterFailure, 'JavaScript execution context was lost');
    let fn = this.entries.get(entry);
    if (fn === undefined) {
      fn = this.context.global.getSync(entry, { reference: true }) as ivm.Reference<(...a: unknown[]) => unknown>;
      this.entries.set(entry, fn);
    }
    const ref = fn;
    return this.run(() => ref.applySync(undefined, args, { arguments: { copy: true }, result: { copy: true }, timeout: this.timeout() }) as T);
  }

  private timeoutFromDeadline = false;

  private timeout(): number {
    const limit = scriptSettings().timeoutMillis;
    const deadline = currentDeadline();
    if (deadline === undefined) {
      this.timeoutFromDeadline = false;
      return limit;
    }
    const left = Math.max(1, Math.ceil(deadline - performance.now()));
    this.timeoutFromDeadline = left < limit;
    return Math.min(limit, left);
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw scriptError(err, this.timeoutFromDeadline);
    }
  }
}

// The shared context, made again after the isolate was replaced.
export function sharedContext(): ScriptContext {
  currentIsolate();
  if (shared === undefined || !shared.alive) shared = new ScriptContext();
  return shared;
}

// What a script's failure answers, as MongoDB's: JSInterpreterFailure, with the script's own error
// ("SyntaxError: ...", "Error: ...") or why it was stopped; MaxTimeMSExpired when the operation's
// maxTimeMS, not the script limit, stopped it.
function scriptError(err: unknown, fromDeadline: boolean): MongoError {
  if (err instanceof MongoError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/timed out/i.test(message)) {
    return fromDeadline ? maxTimeExpired() : new MongoError(ErrorCodes.JSInterpreterFailure, 'JavaScript execution interrupted: exceeded the time limit (internalQueryJavaScriptFnTimeoutMillis)');
  }
  if (/memory limit|disposed/i.test(message)) {
    return new MongoError(ErrorCodes.JSInterpreterFailure, 'Out of memory: the script exceeded internalQueryJavaScriptHeapSizeLimitMB');
  }
  const name = err instanceof Error && err.name !== 'Error' ? `${err.name}: ` : 'Error: ';
  return new MongoError(ErrorCodes.JSInterpreterFailure, `${name}${message}`);
}

// Values to and from a script's text form (canonical Extended JSON).
export function toScriptText(value: unknown): string {
  return EJSON.stringify(value, { relaxed: false });
}

export function fromScriptText(text: string): unknown {
  const parsed = EJSON.parse(`{"v":${text}}`, { relaxed: false }) as Doc;
  // Through BSON, so that the value is held as every other value is (values.ts: an int32 as a
  // number, a double as a Double).
  return deserializeDocument(serializeDocument(parsed)).v;
}
