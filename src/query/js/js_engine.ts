import { EJSON } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { currentDeadline, maxTimeExpired } from '../../base/operation_deadline.js';
import { deserializeDocument, serializeDocument, type Doc } from '../../bson/values.js';
import { ScriptHost, type HostReply } from './script_host_client.js';
import { scriptSettings } from './script_settings.js';

// The process's script engine: one V8 isolate, reused by every script, in the script host, a child
// process of the node (script_host.ts), replaced when a script exhausted its heap and started again
// when V8 aborted it. Each evaluation runs synchronously, within MongoDB's limits: the time left of
// internalQueryJavaScriptFnTimeoutMillis and of the operation's maxTimeMS, whichever ends first.
// A script runs in a context: the shared one (functions of $where, $function, $accumulator) or
// one of its own (a mapReduce, whose scope becomes its globals).

let host: ScriptHost | undefined;
let shared: ScriptContext | undefined;

// How long past a script's time limit the node waits for the host before killing it: a host at
// its heap limit may collect garbage for minutes without reaching the point where it stops.
const HOST_GRACE_MS = 2000;

function scriptHost(): ScriptHost {
  if (!scriptSettings().local) throw new MongoError(ErrorCodes.InternalError, 'a router runs no script: it has a shard run it');
  host ??= new ScriptHost();
  return host;
}

// A context of the isolate with the shell's types in it, and the functions compiled into it.
export class ScriptContext {
  private readonly id: number;
  private readonly generation: number;
  private readonly compiled = new Map<string, number>();
  private lost = false;

  constructor() {
    const owner = scriptHost();
    const { heapLimitMB } = scriptSettings();
    // The host replaces its isolate for another heap limit: every older context is gone.
    if (owner.heapMB !== heapLimitMB) owner.generation++;
    owner.heapMB = heapLimitMB;
    const reply = this.send(owner, { op: 'context', heapMB: heapLimitMB }, false);
    this.id = reply.ctx!;
    this.generation = owner.generation;
  }

  get alive(): boolean {
    return !this.lost && host !== undefined && host.generation === this.generation;
  }

  release(): void {
    if (this.alive) this.send(scriptHost(), { op: 'release', ctx: this.id }, false);
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
    return this.send(scriptHost(), { op: 'call', ctx: this.id, entry, args }, true).value as T;
  }

  private send(owner: ScriptHost, request: Doc, timed: boolean): HostReply {
    const limit = scriptSettings().timeoutMillis;
    const deadline = currentDeadline();
    const left = deadline === undefined ? Infinity : Math.max(1, Math.ceil(deadline - performance.now()));
    const timeout = Math.min(limit, left);
    const reply = owner.request(timed ? { ...request, timeout } : request, timeout + HOST_GRACE_MS);
    if (reply.error === undefined) return reply;
    const { kind, message } = reply.error;
    if (kind === 'timeout' || kind === 'hung') {
      if (left < limit) throw maxTimeExpired();
      throw new MongoError(ErrorCodes.JSInterpreterFailure, 'JavaScript execution interrupted: exceeded the time limit (internalQueryJavaScriptFnTimeoutMillis)');
    }
    if (kind === 'lost') {
      this.lost = true;
      throw new MongoError(ErrorCodes.JSInterpreterFailure, 'JavaScript execution context was lost');
    }
    if (kind === 'memory' || kind === 'died') {
      // A new isolate (or host) holds none of the contexts.
      if (kind === 'memory') owner.generation++;
      throw new MongoError(ErrorCodes.JSInterpreterFailure, 'Out of memory: the script exceeded internalQueryJavaScriptHeapSizeLimitMB');
    }
    throw new MongoError(ErrorCodes.JSInterpreterFailure, message);
  }
}

// The shared context, made again after the isolate was replaced.
export function sharedContext(): ScriptContext {
  if (shared === undefined || !shared.alive) shared = new ScriptContext();
  return shared;
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
