import { MongoBulkWriteError, MongoError, MongoOperationTimeoutError, MongoServerError } from 'mongodb';
import { describe, matchValue, show, type MatchContext } from './unified_matcher.js';
import { bulkWriteResultDocument } from './operations.js';
import type { Doc, ExpectedError } from './test_file.js';
import { Unsupported } from './unsupported.js';

// expectError: does the error an operation raised have the properties the test expects?

interface WriteErrorLike {
  code?: number;
  errmsg?: string;
}

/** Write errors in a server reply carry a code but no codeName; these are the names tests use. */
const CODE_NAMES: Record<string, number> = {
  duplicatekey: 11000,
  documentvalidationfailure: 121,
  writeconflict: 112,
  interrupted: 11601,
  nosuchtransaction: 251,
  writeconcernfailed: 64,
  unknownreplwriteconcern: 79,
};

/** null when the error is as expected; else why not. */
export function checkError(expected: ExpectedError, err: unknown, ctx: MatchContext): string | null {
  if (expected.writeErrors || expected.writeConcernErrors) throw new Unsupported('writeErrors/writeConcernErrors (clientBulkWrite)');
  const server = err instanceof MongoServerError ? err : undefined;
  const parts = errorParts(err);
  if (expected.isClientError !== undefined && expected.isClientError === (server !== undefined)) {
    return expected.isClientError ? `expected a client error, got server error: ${message(err)}` : `expected a server error, got client error: ${message(err)}`;
  }
  if (expected.isTimeoutError !== undefined && expected.isTimeoutError !== err instanceof MongoOperationTimeoutError) {
    return `expected isTimeoutError ${expected.isTimeoutError}, got: ${message(err)}`;
  }
  if (expected.errorContains !== undefined) {
    const needle = expected.errorContains.toLowerCase();
    if (!parts.some((p) => p.errmsg?.toLowerCase().includes(needle))) return `error message does not contain "${expected.errorContains}": ${message(err)}`;
  }
  if (expected.errorCode !== undefined) {
    const code = Number(expected.errorCode);
    if (!server || !parts.some((p) => p.code === code)) return `expected error code ${code}, got ${codeOf(err)}: ${message(err)}`;
  }
  if (expected.errorCodeName !== undefined) {
    const name = expected.errorCodeName.toLowerCase();
    const named = server?.codeName?.toLowerCase() === name || parts.some((p) => p.code !== undefined && CODE_NAMES[name] === p.code);
    if (!named) return `expected error ${expected.errorCodeName}, got ${server?.codeName ?? codeOf(err)}: ${message(err)}`;
  }
  for (const label of expected.errorLabelsContain ?? []) {
    if (!(err instanceof MongoError) || !err.hasErrorLabel(label)) return `error lacks label ${label}: ${labels(err)}`;
  }
  for (const label of expected.errorLabelsOmit ?? []) {
    if (err instanceof MongoError && err.hasErrorLabel(label)) return `error has label ${label}`;
  }
  if (expected.errorResponse !== undefined) {
    if (!server) return `expected a server response, got client error: ${message(err)}`;
    const m = matchValue(expected.errorResponse, server.errorResponse, true, ctx);
    if (m) return `errorResponse: ${describe(m)}`;
  }
  if (expected.expectResult !== undefined) {
    const result = err instanceof MongoBulkWriteError ? bulkWriteResultDocument(err.result, false) : undefined;
    const m = matchValue(expected.expectResult, result, true, ctx);
    if (m) return `error result: ${describe(m)}`;
  }
  return null;
}

/** A bulk write error aggregates several server errors; a match in any of them counts. */
function errorParts(err: unknown): WriteErrorLike[] {
  const parts: WriteErrorLike[] = [{ code: codeOf(err), errmsg: message(err) }];
  if (err instanceof MongoBulkWriteError) {
    const writeErrors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    for (const w of writeErrors) parts.push({ code: w.code, errmsg: w.errmsg });
    const wce = (err.result as unknown as { getWriteConcernError?: () => WriteErrorLike | undefined }).getWriteConcernError?.();
    if (wce) parts.push({ code: wce.code, errmsg: wce.errmsg });
  }
  if (err instanceof MongoServerError && err.writeConcernError) {
    const wce = err.writeConcernError as Doc;
    parts.push({ code: Number(wce.code), errmsg: String(wce.errmsg) });
  }
  return parts;
}

function codeOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

function message(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : show(err);
}

function labels(err: unknown): string {
  return err instanceof MongoError ? JSON.stringify(err.errorLabels) : 'none';
}
