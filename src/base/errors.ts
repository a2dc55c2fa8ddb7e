import { ErrorCodes, codeNameOf, type ErrorCodeName } from './error_codes.js';

// The one error type every layer throws; the command layer turns it into
// {ok: 0, errmsg, code, codeName, ...extra}. `extra` carries MongoDB's structured error info
// (keyPattern/keyValue for DuplicateKey, versions for StaleConfig).
export class MongoError extends Error {
  readonly code: number;
  readonly codeName: string;
  readonly extra: Record<string, unknown>;
  readonly errorLabels: string[];

  constructor(code: number, message: string, extra: Record<string, unknown> = {}, errorLabels: string[] = []) {
    super(message);
    this.code = code;
    this.codeName = codeNameOf(code);
    this.extra = extra;
    this.errorLabels = errorLabels;
  }
}

export function mongoError(name: ErrorCodeName, message: string, extra?: Record<string, unknown>): MongoError {
  return new MongoError(ErrorCodes[name], message, extra);
}

// Invariants that must hold in production too (TigerStyle): a failed one is a bug, reported as
// InternalError rather than a crash of the process.
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new MongoError(ErrorCodes.InternalError, `assertion failed: ${message}`);
}

export function errorReply(err: unknown): Record<string, unknown> {
  if (err instanceof MongoError) {
    const reply: Record<string, unknown> = { ok: 0, errmsg: err.message, code: err.code, codeName: err.codeName, ...err.extra };
    if (err.errorLabels.length > 0) reply.errorLabels = err.errorLabels;
    return reply;
  }
  const message = err instanceof Error ? err.message : String(err);
  return { ok: 0, errmsg: message, code: ErrorCodes.InternalError, codeName: 'InternalError' };
}
