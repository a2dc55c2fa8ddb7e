import { MongoError } from '../base/errors.js';
import { codeNameOf, ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';

// A write concern that asks for replication: w above 1, or a replica set tag (any string but
// "majority", which one process satisfies alone). docshard has no replication yet, so nothing can
// satisfy one; what a client is told follows what MongoDB tells it in the same place.
function replicationAsked(cmd: Doc): { wc: Doc; w: number | string } | undefined {
  const wc = cmd.writeConcern;
  if (!isPlainObject(wc)) return undefined;
  const { w } = wc;
  if (isNumber(w) && toDouble(w) > 1) return { wc, w: toDouble(w) };
  if (typeof w === 'string' && w !== 'majority') return { wc, w };
  return undefined;
}

// A node is a standalone mongod: it refuses such a write concern before running the command, so
// nothing is written (write_concern.cpp, validateWriteConcern).
export function refuseUnreplicatedWriteConcern(cmd: Doc): void {
  const asked = replicationAsked(cmd);
  if (asked === undefined) return;
  throw new MongoError(ErrorCodes.BadValue, typeof asked.w === 'number'
    ? "cannot use 'w' > 1 when a host is not replicated"
    : `cannot use non-majority 'w' mode "${asked.w}" when a host is not a member of a replica set`);
}

// Behind mongos, MongoDB's shards are replica sets: the write is applied, then waiting for the
// write concern fails, and the client gets ok: 1 with a writeConcernError. A router's shards are
// one-member sets in those terms. So the router sends the command on with w: 1 (a shard, a
// standalone, would refuse the original) and returns the error a one-member set gives, to attach
// to the reply (withWriteConcernError). `cmd` is changed in place; undefined when nothing was asked.
export function takeUnsatisfiableWriteConcern(cmd: Doc): Doc | undefined {
  const asked = replicationAsked(cmd);
  if (asked === undefined) return undefined;
  cmd.writeConcern = { ...asked.wc, w: 1 };
  const [code, errmsg] = typeof asked.w === 'number'
    ? [ErrorCodes.UnsatisfiableWriteConcern, 'Not enough data-bearing nodes']
    : [ErrorCodes.UnknownReplWriteConcern, `No write concern mode named '${asked.w}' found in replica set configuration`];
  const writeConcern = { ...asked.wc, wtimeout: asked.wc.wtimeout ?? 0, provenance: 'clientSupplied' };
  return { code, codeName: codeNameOf(code), errmsg, errInfo: { writeConcern } };
}

// The reply with the write concern error, when mongos would report one: after a command that
// succeeded, unless every statement of a write failed, or an ordered write stopped at an error
// (batch_write_op.cpp: only a write that applied something waits for its write concern).
export function withWriteConcernError(cmd: Doc, reply: Doc, writeConcernError: Doc): Doc {
  if (reply.ok !== 1) return reply;
  const failed = Array.isArray(reply.writeErrors) ? reply.writeErrors.length : 0;
  if (failed > 0 && (cmd.ordered !== false || failed >= statementCount(cmd))) return reply;
  return { ...reply, writeConcernError };
}

function statementCount(cmd: Doc): number {
  const statements = cmd.documents ?? cmd.updates ?? cmd.deletes;
  return Array.isArray(statements) ? statements.length : 1;
}
