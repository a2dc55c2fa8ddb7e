import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

// The node's side of its script host (script_host.ts), called synchronously: the query layer
// evaluates $where and $function inside synchronous loops. A worker thread relays each request to
// the host process and its reply back through shared memory, while this thread waits on it with a
// time limit of its own (Atomics.wait): a host that neither answers nor dies (V8 collecting
// garbage without end at its heap limit) is killed, as is one whose script overran; a host that
// died is started again by the next request.
//
// Shared memory: ctl[0] the state (IDLE, REQUEST, REPLY, DIED, KILLED), ctl[1] the length of the
// message in `data` (the request, then the reply), ctl[2] the number of requests made, which the
// relay waits on.
const IDLE = 0;
const REQUEST = 1;
const REPLY = 2;
const DIED = 3;
const KILLED = 4;
const CAPACITY = 64 * 1024 * 1024;

const RELAY = `
const { workerData, parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const { sab, command, args } = workerData;
const ctl = new Int32Array(sab, 0, 4);
const data = new Uint8Array(sab, 16);
let host;
function finish(state) {
  Atomics.store(ctl, 0, state);
  Atomics.notify(ctl, 0);
}
function start() {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const h = { child, pending: Buffer.alloc(0), busy: false };
  child.stdout.on('data', (chunk) => {
    if (host !== h) return;
    h.pending = h.pending.length === 0 ? chunk : Buffer.concat([h.pending, chunk]);
    if (h.pending.length < 4) return;
    const length = h.pending.readUInt32LE(0);
    if (h.pending.length < 4 + length) return;
    const body = h.pending.subarray(4, 4 + length);
    h.pending = h.pending.subarray(4 + length);
    h.busy = false;
    if (length > data.length) return finish(${DIED});
    data.set(body);
    ctl[1] = length;
    finish(${REPLY});
  });
  child.on('exit', () => {
    if (host !== h) return;
    host = undefined;
    if (h.busy) finish(${DIED});
  });
  child.stdin.on('error', () => undefined);
  host = h;
}
parentPort.on('message', (message) => {
  if (message !== 'kill') return;
  if (host !== undefined) host.child.kill('SIGKILL');
  host = undefined;
  finish(${KILLED});
});
let seen = 0;
function forward() {
  seen = Atomics.load(ctl, 2);
  if (host === undefined) start();
  const length = ctl[1];
  const head = Buffer.alloc(4);
  head.writeUInt32LE(length);
  host.busy = true;
  host.child.stdin.write(Buffer.concat([head, Buffer.from(data.subarray(0, length))]));
}
async function listen() {
  for (;;) {
    const waiting = Atomics.waitAsync(ctl, 2, seen);
    if (waiting.async) await waiting.value;
    if (Atomics.load(ctl, 2) !== seen) forward();
  }
}
listen();
`;

export type HostReply = { value?: unknown; ctx?: number; error?: { kind: string; message: string } };

export class ScriptHost {
  private readonly ctl: Int32Array;
  private readonly data: Uint8Array;
  private readonly worker: Worker;
  // Bumped whenever the host died or was killed, or replaced its isolate: older contexts are gone.
  generation = 0;
  // The heap limit the host's isolate was asked for last.
  heapMB = 0;

  constructor() {
    const sab = new SharedArrayBuffer(16 + CAPACITY);
    this.ctl = new Int32Array(sab, 0, 4);
    this.data = new Uint8Array(sab, 16);
    const hostFile = fileURLToPath(new URL('./script_host.ts', import.meta.url));
    // isolated-vm asks Node 20 and later to run without Node's start-up snapshot.
    const args = ['--no-node-snapshot', '--import', import.meta.resolve('tsx'), hostFile];
    this.worker = new Worker(RELAY, { eval: true, workerData: { sab, command: process.execPath, args } });
    this.worker.unref();
  }

  // The host's reply to `request`, or an error of kind 'died' (it exited: V8 aborted it) or 'hung'
  // (no reply within `waitMs`: it was killed).
  request(request: object, waitMs: number): HostReply {
    const body = Buffer.from(JSON.stringify(request), 'utf8');
    if (body.length > this.data.length) return { error: { kind: 'script', message: 'Error: arguments too large for the script host' } };
    this.data.set(body);
    this.ctl[1] = body.length;
    Atomics.store(this.ctl, 0, REQUEST);
    Atomics.add(this.ctl, 2, 1);
    Atomics.notify(this.ctl, 2);
    const waited = Atomics.wait(this.ctl, 0, REQUEST, waitMs);
    if (waited === 'timed-out') {
      this.kill();
      return { error: { kind: 'hung', message: 'the script host did not answer' } };
    }
    const state = Atomics.load(this.ctl, 0);
    Atomics.store(this.ctl, 0, IDLE);
    if (state !== REPLY) {
      this.generation++;
      return { error: { kind: 'died', message: 'the script host died' } };
    }
    return JSON.parse(Buffer.from(this.data.subarray(0, this.ctl[1])).toString('utf8')) as HostReply;
  }

  // Kills the host and waits until the relay has let it go, so that nothing it still sends can
  // land in the shared memory of the next request.
  private kill(): void {
    this.generation++;
    this.worker.postMessage('kill');
    for (let state = Atomics.load(this.ctl, 0); state !== KILLED; state = Atomics.load(this.ctl, 0)) {
      Atomics.wait(this.ctl, 0, state, 1000);
    }
    Atomics.store(this.ctl, 0, IDLE);
  }
}
