import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { HEADER_SIZE, KNOWN_REQUIRED_FLAGS, MsgFlag, OpCode } from './op_codes.js';

// Pure codec for the messages a server receives and sends. Parsing never trusts a length field:
// every offset is checked against the buffer before it is read.

export interface MessageHeader {
  messageLength: number;
  requestId: number;
  responseTo: number;
  opCode: number;
}

export interface DocumentSequence {
  identifier: string;
  documents: Buffer[];
}

export interface OpMsgRequest {
  kind: 'msg';
  header: MessageHeader;
  flags: number;
  body: Buffer;
  sequences: DocumentSequence[];
}

export interface OpQueryRequest {
  kind: 'query';
  header: MessageHeader;
  flags: number;
  fullCollectionName: string;
  numberToSkip: number;
  numberToReturn: number;
  query: Buffer;
}

export interface UnsupportedRequest {
  kind: 'unsupported';
  header: MessageHeader;
}

export type Request = OpMsgRequest | OpQueryRequest | UnsupportedRequest;

// A framing error means the byte stream cannot be trusted any more: the connection is closed.
export class FramingError extends Error {}

export function readHeader(buf: Buffer): MessageHeader {
  return {
    messageLength: buf.readInt32LE(0),
    requestId: buf.readInt32LE(4),
    responseTo: buf.readInt32LE(8),
    opCode: buf.readInt32LE(12),
  };
}

function parseError(code: number, message: string): MongoError {
  return new MongoError(code, message);
}

// A BSON document embedded in a message: checks only that its declared length fits; the content
// is validated when it is deserialised.
function sliceDocument(buf: Buffer, offset: number, end: number): Buffer {
  if (offset + 5 > end) throw parseError(ErrorCodes.InvalidBSON, 'message truncated: document length missing');
  const size = buf.readInt32LE(offset);
  if (size < 5 || offset + size > end) throw parseError(ErrorCodes.InvalidBSON, `invalid BSON document length ${size}`);
  return buf.subarray(offset, offset + size);
}

function readCString(buf: Buffer, offset: number, end: number): [string, number] {
  const nul = buf.indexOf(0, offset);
  if (nul < 0 || nul >= end) throw parseError(ErrorCodes.InvalidBSON, 'unterminated cstring in message');
  return [buf.toString('utf8', offset, nul), nul + 1];
}

export function parseOpMsg(header: MessageHeader, buf: Buffer): OpMsgRequest {
  if (buf.length < HEADER_SIZE + 5) throw parseError(ErrorCodes.InvalidBSON, 'OP_MSG too short');
  const flags = buf.readUInt32LE(HEADER_SIZE);
  const unknownRequired = flags & 0xffff & ~KNOWN_REQUIRED_FLAGS;
  if (unknownRequired !== 0) {
    throw parseError(ErrorCodes.IllegalOpMsgFlag, `Unrecognized required flags in OP_MSG: ${unknownRequired}`);
  }
  let end = buf.length;
  if (flags & MsgFlag.checksumPresent) {
    if (end < HEADER_SIZE + 4 + 4) throw parseError(ErrorCodes.InvalidBSON, 'OP_MSG too short for its checksum');
    end -= 4;
  }
  let offset = HEADER_SIZE + 4;
  let body: Buffer | undefined;
  const sequences: DocumentSequence[] = [];
  while (offset < end) {
    const kind = buf[offset]!;
    offset += 1;
    if (kind === 0) {
      if (body !== undefined) throw parseError(ErrorCodes.InvalidBSON, 'Multiple body sections in OP_MSG');
      body = sliceDocument(buf, offset, end);
      offset += body.length;
    } else if (kind === DOCUMENT_SEQUENCE_SECTION) {
      if (offset + 4 > end) throw parseError(ErrorCodes.InvalidBSON, 'OP_MSG document sequence truncated');
      const size = buf.readInt32LE(offset);
      const seqEnd = offset + size;
      if (size < 5 || seqEnd > end) throw parseError(ErrorCodes.InvalidBSON, `invalid document sequence size ${size}`);
      const [identifier, afterName] = readCString(buf, offset + 4, seqEnd);
      if (sequences.some((s) => s.identifier === identifier)) {
        throw parseError(ErrorCodes.TooManyDocumentSequences, `Duplicate document sequence: ${identifier}`);
      }
      const documents: Buffer[] = [];
      let p = afterName;
      while (p < seqEnd) {
        const doc = sliceDocument(buf, p, seqEnd);
        documents.push(doc);
        p += doc.length;
      }
      sequences.push({ identifier, documents });
      offset = seqEnd;
    } else {
      throw parseError(ErrorCodes.InvalidBSON, `Unknown section kind ${kind} in OP_MSG`);
    }
  }
  if (body === undefined) throw parseError(ErrorCodes.InvalidBSON, 'OP_MSG has no body section');
  return { kind: 'msg', header, flags, body, sequences };
}

export function parseOpQuery(header: MessageHeader, buf: Buffer): OpQueryRequest {
  let offset = HEADER_SIZE;
  if (buf.length < offset + 4) throw parseError(ErrorCodes.InvalidBSON, 'OP_QUERY too short');
  const flags = buf.readInt32LE(offset);
  offset += 4;
  const [fullCollectionName, afterName] = readCString(buf, offset, buf.length);
  offset = afterName;
  if (buf.length < offset + 8) throw parseError(ErrorCodes.InvalidBSON, 'OP_QUERY too short');
  const numberToSkip = buf.readInt32LE(offset);
  const numberToReturn = buf.readInt32LE(offset + 4);
  offset += 8;
  const query = sliceDocument(buf, offset, buf.length);
  return { kind: 'query', header, flags, fullCollectionName, numberToSkip, numberToReturn, query };
}

export function parseRequest(buf: Buffer): Request {
  const header = readHeader(buf);
  switch (header.opCode) {
    case OpCode.OP_MSG: return parseOpMsg(header, buf);
    case OpCode.OP_QUERY: return parseOpQuery(header, buf);
    default: return { kind: 'unsupported', header };
  }
}

function writeHeader(buf: Buffer, requestId: number, responseTo: number, opCode: number): void {
  buf.writeInt32LE(buf.length, 0);
  buf.writeInt32LE(requestId, 4);
  buf.writeInt32LE(responseTo, 8);
  buf.writeInt32LE(opCode, 12);
}

// Replies carry exactly one kind-0 section and never a checksum: the driver reads anything after
// the body as another section and fails on kind 1.
export const OP_MSG_REPLY_PREFIX = HEADER_SIZE + 4 + 1;

// An OP_MSG section's kind byte: 0 is the body, 1 a document sequence.
export const DOCUMENT_SEQUENCE_SECTION = 1;
export const OP_REPLY_PREFIX = HEADER_SIZE + 20;

// Fills in the first OP_MSG_REPLY_PREFIX bytes of `out`, whose body is already in place after them.
export function finishOpMsgReply(out: Buffer, requestId: number, responseTo: number): Buffer {
  writeHeader(out, requestId, responseTo, OpCode.OP_MSG);
  out.writeUInt32LE(0, HEADER_SIZE);
  out[HEADER_SIZE + 4] = 0;
  return out;
}

export function finishOpReply(out: Buffer, requestId: number, responseTo: number): Buffer {
  writeHeader(out, requestId, responseTo, OpCode.OP_REPLY);
  out.writeInt32LE(8, HEADER_SIZE); // AwaitCapable, as mongod sets it
  out.writeBigInt64LE(0n, HEADER_SIZE + 4);
  out.writeInt32LE(0, HEADER_SIZE + 12);
  out.writeInt32LE(1, HEADER_SIZE + 16);
  return out;
}

export function encodeOpMsgRequest(body: Uint8Array, requestId: number, flags = 0): Buffer {
  const out = Buffer.allocUnsafe(HEADER_SIZE + 4 + 1 + body.length);
  writeHeader(out, requestId, 0, OpCode.OP_MSG);
  out.writeUInt32LE(flags >>> 0, HEADER_SIZE);
  out[HEADER_SIZE + 4] = 0;
  out.set(body, HEADER_SIZE + 5);
  return out;
}
