import { Timestamp } from 'bson';
import { HEADER_SIZE, Limits, OpCode } from '../wire/op_codes.js';
import { OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import { cstringSize, embeddedDocuments, readPlainDocument } from '../bson/raw_document.js';
import { DOCUMENT_SEQUENCE_SECTION } from '../wire/message.js';
import { nameIs, newElement, readElement, TYPE_DOCUMENT, TYPE_STRING } from './raw_elements.js';
import { CLUSTER_TIME_ELEMENT_LENGTH, clusterTimeElementTimeAt, writeClusterTimeElement } from '../sessions/logical_time_metadata.js';
import { isValidCollectionName } from '../command_layer/args.js';

// A command as a driver sends it, read from its OP_MSG bytes without decoding it: where each of
// the fields a fast path knows is. The router's fast paths (insert_fast_path.ts,
// find_fast_path.ts) plan such commands onto one shard as bytes. Any other shape is undefined,
// and the message takes the message handler's path, whose checks and errors then apply.

export interface FieldShape {
  name: Buffer;
  type: number;
  // Passed on to the shard as it is (the others belong to the client's conversation with the router).
  forward: boolean;
}

// The command's name (its value a string, the collection), then the fields it may hold, and the
// identifier of the one document sequence it may come with (a kind-1 section after the body).
export interface CommandShape {
  command: Buffer;
  fields: readonly FieldShape[];
  sequence?: Buffer;
  // Where commandShape put the generic fields every driver command carries.
  lsidSlot: number;
  clusterTimeSlot: number;
  dbSlot: number;
}

export interface ReceivedCommand {
  requestId: number;
  // [start, end) of each field's value in the message, by its place in the shape (the command's
  // own value at 0, then the fields from 1); -1 for a field the command does not hold.
  values: number[];
  // The elements passed on (the command's and the forwarded fields'), as [start, end) pairs.
  forwarded: number[];
  // The document sequence, passed on as it is: where its section starts, where its documents
  // start, where it ends (the message's end); undefined without one.
  sequence: [number, number, number] | undefined;
}

export function field(name: string, type: number, forward: boolean): FieldShape {
  return { name: Buffer.from(name), type, forward };
}

// A shape: the command's own fields (at slots 1, 2, ...), then lsid, $clusterTime and $db, which
// stay with the router.
export function commandShape(command: string, fields: FieldShape[], sequence?: string): CommandShape {
  return {
    command: Buffer.from(command),
    fields: [...fields, field('lsid', TYPE_DOCUMENT, false), field('$clusterTime', TYPE_DOCUMENT, false), field('$db', TYPE_STRING, false)],
    sequence: sequence === undefined ? undefined : Buffer.from(sequence),
    lsidSlot: fields.length + 1,
    clusterTimeSlot: fields.length + 2,
    dbSlot: fields.length + 3,
  };
}

// The OP_MSG request `message` (framed: its length is its size) when it has no flags and is one
// body section, whose first element is the shape's command (a string) and whose other elements are
// fields of the shape, each at most once and of its type, followed by nothing or by one document
// sequence with the shape's identifier (not also a field of the body).
export function readReceivedCommand(message: Buffer, shape: CommandShape): ReceivedCommand | undefined {
  if (message.length < OP_MSG_REPLY_PREFIX + 5 || message.readInt32LE(12) !== OpCode.OP_MSG || message.readUInt32LE(HEADER_SIZE) !== 0 || message[HEADER_SIZE + 4] !== 0) return undefined;
  const bodyLength = message.readInt32LE(OP_MSG_REPLY_PREFIX);
  const bodyEnd = OP_MSG_REPLY_PREFIX + bodyLength;
  if (bodyLength < 5 || bodyEnd > message.length || bodyLength > Limits.maxBsonInternalSize || message[bodyEnd - 1] !== 0) return undefined;
  const sequence = bodyEnd === message.length ? undefined : readSequence(message, bodyEnd, shape.sequence);
  if (bodyEnd !== message.length && sequence === undefined) return undefined;
  const { fields } = shape;
  const values: number[] = [];
  for (let i = 0; i <= fields.length; i++) values.push(-1, -1);
  const forwarded: number[] = [];
  const end = bodyEnd - 1;
  const e = newElement();
  let pos = OP_MSG_REPLY_PREFIX + 4;
  while (pos < end) {
    if (!readElement(message, pos, end, e)) return undefined;
    const { type, nameStart, nameEnd } = e;
    let slot: number;
    let forward: boolean;
    if (pos === OP_MSG_REPLY_PREFIX + 4) {
      if (type !== TYPE_STRING || !nameIs(message, nameStart, nameEnd, shape.command)) return undefined;
      slot = 0;
      forward = true;
    } else {
      if (sequence !== undefined && nameIs(message, nameStart, nameEnd, shape.sequence!)) return undefined;
      slot = 1;
      while (slot <= fields.length && !nameIs(message, nameStart, nameEnd, fields[slot - 1]!.name)) slot++;
      if (slot > fields.length || fields[slot - 1]!.type !== type || values[2 * slot] !== -1) return undefined;
      forward = fields[slot - 1]!.forward;
      // The shard judges what it is sent; a document kept here must be one decoding accepts.
      if (!forward && type === TYPE_DOCUMENT && readPlainDocument(message.subarray(e.valueStart, e.end)) === undefined) return undefined;
    }
    values[2 * slot] = e.valueStart;
    values[2 * slot + 1] = e.end;
    if (forward) forwarded.push(pos, e.end);
    pos = e.end;
  }
  if (pos !== end || values[0] === -1) return undefined;
  return { requestId: message.readInt32LE(4), values, forwarded, sequence };
}

// The kind-1 section at `at` when it runs exactly to the message's end and carries `identifier`.
function readSequence(message: Buffer, at: number, identifier: Buffer | undefined): [number, number, number] | undefined {
  if (identifier === undefined || at + 5 > message.length || message[at] !== DOCUMENT_SEQUENCE_SECTION || at + 1 + message.readInt32LE(at + 1) !== message.length) return undefined;
  const name = cstringSize(message, at + 5, message.length);
  if (name < 0 || !nameIs(message, at + 5, at + 5 + name - 1, identifier)) return undefined;
  return [at, at + 5 + name, message.length];
}

// The documents of the body's array at `slot`, or of the document sequence: each in bounds, and
// (in an array) every element a document; undefined when any is not.
export function receivedDocuments(message: Buffer, command: ReceivedCommand, slot: number): Buffer[] | undefined {
  const { values, sequence } = command;
  if (sequence !== undefined) return embeddedDocuments(message, sequence[1], sequence[2], false);
  const start = values[2 * slot]!;
  return start === -1 ? undefined : embeddedDocuments(message, start + 4, values[2 * slot + 1]! - 1, true);
}

// The string value at [start, end) (its length, its bytes, its NUL) when it is printable ASCII.
export function asciiString(b: Buffer, start: number, end: number): string | undefined {
  const last = end - 1;
  if (b.readInt32LE(start) !== last - start - 4 + 1 || b[last] !== 0) return undefined;
  for (let i = start + 4; i < last; i++) if (b[i]! < 0x20 || b[i]! > 0x7e) return undefined;
  return b.toString('latin1', start + 4, last);
}

// The namespace a command names, when collectionArg would take its collection as it is and its
// database is one the router routes (not config or admin, which the config server answers).
export function routedNamespace(message: Buffer, command: ReceivedCommand, shape: CommandShape): { db: string; ns: string } | undefined {
  const coll = collectionName(message, command);
  const db = routedDatabase(message, command, shape.dbSlot);
  return coll === undefined || db === undefined ? undefined : { db, ns: `${db}.${coll}` };
}

function collectionName(message: Buffer, command: ReceivedCommand): string | undefined {
  const coll = asciiString(message, command.values[0]!, command.values[1]!);
  return coll === undefined || !isValidCollectionName(coll) ? undefined : coll;
}

// The `$db` at `slot`, unless it is one the router answers from the config server (config, admin).
function routedDatabase(message: Buffer, command: ReceivedCommand, slot: number): string | undefined {
  const { values } = command;
  if (values[2 * slot] === -1) return undefined;
  const db = asciiString(message, values[2 * slot]!, values[2 * slot + 1]!);
  return db === undefined || db.length === 0 || db === 'config' || db === 'admin' ? undefined : db;
}

// The value at `slot` as a view into the message, or undefined when absent.
export function valueBytes(message: Buffer, command: ReceivedCommand, slot: number): Buffer | undefined {
  const start = command.values[2 * slot]!;
  return start === -1 ? undefined : message.subarray(start, command.values[2 * slot + 1]!);
}

// The [start, end) of the elements at `slots` that the command holds, in that order: fields the
// shape keeps with the router that are passed on all the same (a retryable write's session).
export function elementBounds(command: ReceivedCommand, shape: CommandShape, slots: readonly number[]): number[] {
  const out: number[] = [];
  for (const slot of slots) {
    const valueStart = command.values[2 * slot]!;
    // The element starts with its type byte, then its name and the name's NUL.
    if (valueStart !== -1) out.push(valueStart - shape.fields[slot - 1]!.name.length - 2, command.values[2 * slot + 1]!);
  }
  return out;
}

// The shard's OP_MSG request: the forwarded elements, then the elements at `also` ([start, end)
// pairs), then `added` (elements the router writes itself), then a $clusterTime element whose time
// is written once the command has entered (requestClusterTimeAt), then `tail` (the version and $db
// elements and the body's terminator, versioned_request.ts's versionTail), then the document
// sequence as it came; its header left for WireClient.forwardMessage.
const UNSET = new Timestamp({ t: 0, i: 0 });

// Where the time of a shardRequest's $clusterTime is, given the `tail` it was built with.
export function requestClusterTimeAt(request: Buffer, tail: Buffer): number {
  return clusterTimeElementTimeAt(OP_MSG_REPLY_PREFIX + request.readInt32LE(OP_MSG_REPLY_PREFIX) - tail.length - CLUSTER_TIME_ELEMENT_LENGTH);
}

export function shardRequest(message: Buffer, command: ReceivedCommand, tail: Buffer, also: readonly number[] = [], added?: Buffer): Buffer {
  const { forwarded, sequence } = command;
  let bodyLength = 4 + CLUSTER_TIME_ELEMENT_LENGTH + tail.length + (added?.length ?? 0);
  for (let i = 0; i < forwarded.length; i += 2) bodyLength += forwarded[i + 1]! - forwarded[i]!;
  for (let i = 0; i < also.length; i += 2) bodyLength += also[i + 1]! - also[i]!;
  const sequenceLength = sequence === undefined ? 0 : sequence[2] - sequence[0];
  const out = Buffer.allocUnsafe(OP_MSG_REPLY_PREFIX + bodyLength + sequenceLength);
  out.writeInt32LE(bodyLength, OP_MSG_REPLY_PREFIX);
  let pos = OP_MSG_REPLY_PREFIX + 4;
  for (let i = 0; i < forwarded.length; i += 2) pos += message.copy(out, pos, forwarded[i]!, forwarded[i + 1]!);
  for (let i = 0; i < also.length; i += 2) pos += message.copy(out, pos, also[i]!, also[i + 1]!);
  if (added !== undefined) pos += added.copy(out, pos);
  writeClusterTimeElement(out, pos, UNSET);
  pos += CLUSTER_TIME_ELEMENT_LENGTH;
  pos += tail.copy(out, pos);
  if (sequence !== undefined) message.copy(out, pos, sequence[0], sequence[2]);
  return out;
}
