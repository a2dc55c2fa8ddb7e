import { createHash } from 'node:crypto';
import ivm from 'isolated-vm';
import { SHELL_PRELUDE } from './shell_prelude.js';

// The script host: a child process of the node that holds its one V8 isolate (isolated-vm: its own
// heap, stopped when its time is up). It lives apart because V8 aborts the whole process on some
// heap exhaustion (one allocation larger than the heap left, a dictionary that outgrows it), which
// the isolate's memory limit does not catch: then only the host dies, and the node starts another.
// It answers framed requests on stdin (4-byte little-endian length, then JSON) in order on stdout:
//   {op: 'context', heapMB}                 -> {ctx}      a context with the shell's types
//   {op: 'release', ctx}                    -> {}
//   {op: 'call', ctx, entry, args, timeout} -> {value} | {error: {kind, message}}
// kind: 'timeout' (past `timeout` ms), 'memory' (the isolate ran out of heap and was replaced),
// 'lost' (the context belonged to a replaced isolate), 'script' (the script's own error).

let isolate: ivm.Isolate | undefined;
let heapMB = 0;
const contexts = new Map<number, ivm.Context>();
let nextId = 1;

function currentIsolate(wantedMB: number): ivm.Isolate {
  if (isolate === undefined || isolate.isDisposed || heapMB !== wantedMB) {
    if (isolate !== undefined && !isolate.isDisposed) isolate.dispose();
    isolate = new ivm.Isolate({ memoryLimit: wantedMB });
    heapMB = wantedMB;
    contexts.clear();
  }
  return isolate;
}

type Request = { op: 'context'; heapMB: number } | { op: 'release'; ctx: number } | { op: 'call'; ctx: number; entry: string; args: unknown[]; timeout: number };

function failure(err: unknown): { error: { kind: string; message: string } } {
  const message = err instanceof Error ? err.message : String(err);
  if (/timed out/i.test(message)) return { error: { kind: 'timeout', message } };
  if (isolate === undefined || isolate.isDisposed || /memory limit|disposed/i.test(message)) {
    contexts.clear();
    return { error: { kind: 'memory', message } };
  }
  const name = err instanceof Error && err.name !== 'Error' ? err.name : 'Error';
  return { error: { kind: 'script', message: `${name}: ${message}` } };
}

function handle(request: Request): unknown {
  if (request.op === 'context') {
    const owner = currentIsolate(request.heapMB);
    const context = owner.createContextSync();
    context.global.setSync('globalThis', context.global.derefInto());
    // The shell's hex_md5, which MongoDB's scripts may call (its manual's $where example does).
    context.global.setSync('hex_md5', new ivm.Callback((text: unknown) => createHash('md5').update(String(text)).digest('hex')));
    // MongoDB's server-side sleep(ms): the script waits, as the driver specifications' tests
    // make a $where hold a connection busy. The host's thread is the script's: blocking it is the point.
    context.global.setSync('sleep', new ivm.Callback((ms: unknown) => {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, Number(ms) || 0));
    }));
    context.evalSync(SHELL_PRELUDE);
    const ctx = nextId++;
    contexts.set(ctx, context);
    return { ctx };
  }
  const context = contexts.get(request.ctx);
  if (request.op === 'release') {
    contexts.delete(request.ctx);
    if (context !== undefined && isolate !== undefined && !isolate.isDisposed) context.release();
    return {};
  }
  if (context === undefined) return { error: { kind: 'lost', message: 'the script context was lost' } };
  const fn = context.global.getSync(request.entry, { reference: true }) as ivm.Reference<(...a: unknown[]) => unknown>;
  return { value: fn.applySync(undefined, request.args, { arguments: { copy: true }, result: { copy: true }, timeout: request.timeout }) };
}

function reply(body: unknown): void {
  const json = Buffer.from(JSON.stringify(body), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32LE(json.length);
  process.stdout.write(Buffer.concat([head, json]));
}

let pending: Buffer = Buffer.alloc(0);
process.stdin.on('data', (chunk: Buffer) => {
  pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
  while (pending.length >= 4) {
    const length = pending.readUInt32LE(0);
    if (pending.length < 4 + length) break;
    const request = JSON.parse(pending.toString('utf8', 4, 4 + length)) as Request;
    pending = pending.subarray(4 + length);
    let body: unknown;
    try {
      body = handle(request);
    } catch (err) {
      body = failure(err);
    }
    reply(body);
  }
});
process.stdin.on('end', () => process.exit(0));
