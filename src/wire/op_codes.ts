export const OpCode = {
  OP_REPLY: 1,
  OP_UPDATE: 2001,
  OP_INSERT: 2002,
  OP_QUERY: 2004,
  OP_GET_MORE: 2005,
  OP_DELETE: 2006,
  OP_KILL_CURSORS: 2007,
  OP_COMPRESSED: 2012,
  OP_MSG: 2013,
} as const;

export const MsgFlag = {
  checksumPresent: 1 << 0,
  moreToCome: 1 << 1,
  exhaustAllowed: 1 << 16,
} as const;

// Bits 0-15 are "required": a receiver must reject any it does not know (OP_MSG spec).
export const KNOWN_REQUIRED_FLAGS = MsgFlag.checksumPresent | MsgFlag.moreToCome;

export const Limits = {
  maxBsonObjectSize: 16 * 1024 * 1024,
  // Internal documents (e.g. a user document plus update bookkeeping) may exceed the user limit
  // by this much, as in mongod (BSONObjMaxInternalSize).
  maxBsonInternalSize: 16 * 1024 * 1024 + 16 * 1024,
  maxMessageSizeBytes: 48_000_000,
  maxWriteBatchSize: 100_000,
} as const;

export const HEADER_SIZE = 16;
