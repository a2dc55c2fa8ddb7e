import { errorReply } from '../base/errors.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { Limits } from '../wire/op_codes.js';

// One entry of a write command's `writeErrors`: {index, code, codeName?, errmsg, ...errInfo}.
export function writeError(index: number, err: unknown): Doc {
  const { ok: _ok, ...rest } = errorReply(err);
  return { index, ...rest };
}

export function checkBatchSize(count: number): void {
  if (count < 1 || count > Limits.maxWriteBatchSize) {
    throw new MongoError(ErrorCodes.InvalidLength, `Write batch sizes must be between 1 and ${Limits.maxWriteBatchSize}. Got ${count} operations.`);
  }
}

export function withWriteErrors(reply: Doc, errors: Doc[]): Doc {
  if (errors.length > 0) reply.writeErrors = errors;
  return reply;
}
