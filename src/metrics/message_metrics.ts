import { ARRAY, BOOLEAN, cstringSize, DOUBLE, INT32, INT64, valueSize } from '../bson/raw_document.js';
import { HEADER_SIZE, OpCode } from '../wire/op_codes.js';
import type { CommandMetrics } from './command_metrics.js';

// Commands are counted where every request of a process passes, whichever path answers it (a
// router's fast paths answer without decoding anything): at its message handler, from the bytes.
// The request names the command (its body's first element); the reply says how it went (its
// top-level `ok`) and whether a retryable write was answered from an earlier try
// (`retriedStmtIds`). Both are read in place, without decoding the documents.

type Handler<C> = (conn: C, message: Buffer) => Buffer | undefined | Promise<Buffer | undefined>;

// Where an OP_REPLY's document starts: header, responseFlags, cursorID, startingFrom, numberReturned.
const OP_REPLY_DOCUMENT_AT = HEADER_SIZE + 4 + 8 + 4 + 4;
// An OP_MSG's first section: header, then flagBits.
const OP_MSG_SECTIONS_AT = HEADER_SIZE + 4;
const BODY_SECTION = 0;

// What else looks at each answered request, with the duration and outcome counted for it (the
// slow operation log, slow_operations.ts): the request is timed and its reply read once.
export type RequestObserver = (message: Buffer, elapsedMs: number, ok: boolean) => void;

// `commandName` maps a name read from a request to the one to count it under: the name in the
// process's command table (aliases to theirs), or "unknown", so clients cannot grow the label set.
export function withCommandMetrics<C>(metrics: CommandMetrics, commandName: (received: string) => string, handler: Handler<C>, observe?: RequestObserver): Handler<C> {
  return (conn, message) => {
    const started = performance.now();
    const command = commandName(requestCommandName(message) ?? '');
    let reply;
    try {
      reply = handler(conn, message);
    } catch (err) {
      metrics.record(command, false, (performance.now() - started) / 1000);
      throw err;
    }
    if (!(reply instanceof Promise)) {
      recordReply(metrics, command, started, message, reply, observe);
      return reply;
    }
    return reply.then((r) => {
      recordReply(metrics, command, started, message, r, observe);
      return r;
    }, (err: unknown) => {
      metrics.record(command, false, (performance.now() - started) / 1000);
      throw err;
    });
  };
}

function recordReply(metrics: CommandMetrics, command: string, started: number, message: Buffer, reply: Buffer | undefined, observe: RequestObserver | undefined): void {
  const elapsedMs = performance.now() - started;
  // A moreToCome request has no reply to read: it was accepted.
  const outcome = reply === undefined ? undefined : readReply(reply);
  const ok = outcome?.ok ?? true;
  metrics.record(command, ok, elapsedMs / 1000);
  if (outcome !== undefined && outcome.retriedStatements > 0) metrics.recordRetriedStatements(outcome.retriedStatements);
  observe?.(message, elapsedMs, ok);
}

// The first element name of an OP_MSG body, or of an OP_QUERY's query (the legacy hello);
// undefined when the bytes hold neither.
export function requestCommandName(message: Buffer): string | undefined {
  if (message.length < HEADER_SIZE) return undefined;
  const end = Math.min(message.length, message.readInt32LE(0));
  const body = documentStart(message, end);
  if (body === undefined || body + 5 > end) return undefined;
  const nameAt = body + 5;
  const size = cstringSize(message, nameAt, end);
  return size <= 1 ? undefined : message.toString('utf8', nameAt, nameAt + size - 1);
}

// The bytes of an OP_MSG's body or an OP_QUERY's query; undefined when the message holds neither
// whole.
export function requestDocument(message: Buffer): Buffer | undefined {
  if (message.length < HEADER_SIZE) return undefined;
  const end = Math.min(message.length, message.readInt32LE(0));
  const body = documentStart(message, end);
  if (body === undefined || body + 5 > end) return undefined;
  const size = message.readInt32LE(body);
  return size < 5 || body + size > end ? undefined : message.subarray(body, body + size);
}

export interface ReplyOutcome {
  ok: boolean;
  retriedStatements: number;
}

// A reply's `ok` (a number or boolean, true when absent as in no reply of ours) and the length of
// its `retriedStmtIds`; undefined when the bytes are no reply document.
export function readReply(reply: Buffer): ReplyOutcome | undefined {
  if (reply.length < HEADER_SIZE) return undefined;
  const end = Math.min(reply.length, reply.readInt32LE(0));
  const body = documentStart(reply, end);
  if (body === undefined) return undefined;
  const docEnd = Math.min(end, body + reply.readInt32LE(body)) - 1;
  let ok = true;
  let retriedStatements = 0;
  let pos = body + 4;
  while (pos < docEnd) {
    const type = reply[pos]!;
    const nameSize = cstringSize(reply, pos + 1, docEnd);
    if (nameSize < 0) return undefined;
    const at = pos + 1 + nameSize;
    const size = valueSize(reply, type, at, docEnd);
    if (size < 0) return undefined;
    if (nameSize === 3 && reply[pos + 1] === 0x6f && reply[pos + 2] === 0x6b) ok = truthy(reply, type, at);
    else if (type === ARRAY && reply.toString('latin1', pos + 1, at - 1) === 'retriedStmtIds') retriedStatements = elementCount(reply, at, at + size - 1);
    pos = at + size;
  }
  return { ok, retriedStatements };
}

function documentStart(message: Buffer, end: number): number | undefined {
  if (end < HEADER_SIZE + 5) return undefined;
  switch (message.readInt32LE(12)) {
    case OpCode.OP_MSG: {
      // The body is the one kind-0 section; document sequences (kind 1) may come before it.
      let pos = OP_MSG_SECTIONS_AT;
      while (pos + 5 <= end) {
        if (message[pos] === BODY_SECTION) return pos + 1;
        pos += 1 + message.readInt32LE(pos + 1);
      }
      return undefined;
    }
    case OpCode.OP_QUERY: {
      const name = cstringSize(message, OP_MSG_SECTIONS_AT, end);
      return name < 0 ? undefined : OP_MSG_SECTIONS_AT + name + 8;
    }
    case OpCode.OP_REPLY: return OP_REPLY_DOCUMENT_AT;
    default: return undefined;
  }
}

function truthy(b: Buffer, type: number, at: number): boolean {
  switch (type) {
    case DOUBLE: return b.readDoubleLE(at) !== 0;
    case INT32: return b.readInt32LE(at) !== 0;
    case INT64: return b.readBigInt64LE(at) !== 0n;
    case BOOLEAN: return b[at] !== 0;
    default: return false;
  }
}

function elementCount(b: Buffer, from: number, end: number): number {
  let count = 0;
  let pos = from + 4;
  while (pos < end) {
    const nameSize = cstringSize(b, pos + 1, end);
    const size = nameSize < 0 ? -1 : valueSize(b, b[pos]!, pos + 1 + nameSize, end);
    if (size < 0) return count;
    count += 1;
    pos += 1 + nameSize + size;
  }
  return count;
}
