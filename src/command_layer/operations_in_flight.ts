import type { Doc } from '../bson/values.js';
import { deserializeDocument } from '../bson/values.js';
import type { ConnectionInfo } from './connection_info.js';
import { opMsgReply, type MessageHandler } from './message_handler.js';
import { parseRequest } from '../wire/message.js';
import { MsgFlag } from '../wire/op_codes.js';
import type { Clock } from '../base/clock.js';
import { redactedForLog } from '../auth/authorization_policy.js';

// A process's client operations in flight, as currentOp lists them (a router's own with
// `$currentOp: {localOps: true}`; a node's beside its background work), and a router's killOp of
// one: every request from its bytes arriving to its reply, whichever path answers it. A killed
// operation's client is answered Interrupted at once; what the operation had sent to the shards
// finishes there and its answer is dropped (a shard cursor it opened meanwhile is closed by the
// shard's idle reaper).

// MongoDB's Interrupted (11601), what a killed operation answers.
const INTERRUPTED_REPLY: Doc = { ok: 0, errmsg: 'operation was interrupted', code: 11601, codeName: 'Interrupted' };

interface OperationInFlight {
  readonly opid: number;
  readonly conn: ConnectionInfo;
  readonly message: Buffer;
  readonly startedAtMs: number;
  // Answers the client now; set once the operation waits for something.
  interrupt: (() => void) | undefined;
}

export class OperationsInFlight {
  private nextOpid = 1;
  private readonly running = new Map<number, OperationInFlight>();

  // `clock`: what an operation's start time is read from.
  constructor(private readonly clock: Clock) {}

  // `handler` with each request registered while it runs. A request answered synchronously costs
  // a map entry; one that waits, a promise the kill can settle first.
  wrap(handler: MessageHandler): MessageHandler {
    return (conn, message) => {
      const op: OperationInFlight = { opid: this.nextOpid++, conn, message, startedAtMs: this.clock.now(), interrupt: undefined };
      this.running.set(op.opid, op);
      let reply;
      try {
        reply = handler(conn, message);
      } catch (err) {
        this.running.delete(op.opid);
        throw err;
      }
      if (!(reply instanceof Promise)) {
        this.running.delete(op.opid);
        return reply;
      }
      const pending = reply;
      return new Promise((resolve, reject) => {
        op.interrupt = () => resolve(interruptedReply(message));
        pending.then((r) => {
          this.running.delete(op.opid);
          resolve(r);
        }, (err: unknown) => {
          this.running.delete(op.opid);
          reject(err);
        });
      });
    };
  }

  // killOp: false when no such operation is running (or it cannot be interrupted yet).
  kill(opid: number): boolean {
    const op = this.running.get(opid);
    if (op?.interrupt === undefined) return false;
    this.running.delete(opid);
    op.interrupt();
    return true;
  }

  // currentOp entries, as mongod and mongos's localOps list them: the command as received.
  list(nowMs: number): Doc[] {
    return [...this.running.values()].map((op) => {
      const micros = Math.max(0, nowMs - op.startedAtMs) * 1000;
      const command = commandOf(op.message);
      const name = command === undefined ? '' : Object.keys(command)[0] ?? '';
      // A getMore names its collection apart, as mongod's currentOp shows it.
      const target = name === 'getMore' ? command?.collection : command?.[name];
      return {
        type: 'op', desc: `conn${op.conn.id}`, connectionId: op.conn.id, client: op.conn.remote, opid: op.opid, active: true,
        secs_running: Math.floor(micros / 1e6), microsecs_running: micros, op: opType(name),
        ns: typeof target === 'string' && typeof command?.$db === 'string' ? `${command.$db}.${target}` : `${String(command?.$db ?? 'admin')}.$cmd`,
        command: command === undefined ? {} : redactedForLog(name, command), ...(op.conn.clientMetadata !== undefined ? { clientMetadata: op.conn.clientMetadata } : {}),
      };
    });
  }
}

const byProcess = new WeakMap<object, OperationsInFlight>();

// The registry of a process (its services object, a router's or a node's), shared by the message
// wrapper, killOp and currentOp.
export function operationsInFlightOf(services: { readonly wallClock: Clock }): OperationsInFlight {
  let ops = byProcess.get(services);
  if (ops === undefined) byProcess.set(services, ops = new OperationsInFlight(services.wallClock));
  return ops;
}

function interruptedReply(message: Buffer): Buffer | undefined {
  const request = parseRequest(message);
  if (request.kind === 'msg' && (request.flags & MsgFlag.moreToCome) !== 0) return undefined;
  return opMsgReply({ ...INTERRUPTED_REPLY }, message.readInt32LE(4));
}

function commandOf(message: Buffer): Doc | undefined {
  try {
    const request = parseRequest(message);
    return request.kind === 'msg' ? deserializeDocument(request.body) : request.kind === 'query' ? deserializeDocument(request.query) : undefined;
  } catch {
    return undefined;
  }
}

function opType(name: string): string {
  switch (name) {
    case 'find': return 'query';
    case 'getMore': return 'getmore';
    case 'insert': case 'update': case 'delete': return name;
    default: return 'command';
  }
}
