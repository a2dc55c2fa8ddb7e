import { Long, Timestamp, type Binary } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, type Doc } from '../bson/values.js';
import type { OperationSessionInfo } from '../storage/op_observer.js';
import type { UpdateDescription } from './update_description.js';

// MongoDB's oplog entry format (version 2). An operation inside a write unit is an `InnerOp`
// (what an applyOps array holds: no ts, t or wall); the unit's entry wraps one op, or several in
// `{op: 'c', ns: 'admin.$cmd', o: {applyOps: [...]}}`.

export const OPLOG_NS = 'local.oplog.rs';

export type OpType = 'i' | 'u' | 'd' | 'c' | 'n';

export interface InnerOp {
  op: OpType;
  ns: string;
  ui?: Binary;
  o: Doc;
  o2?: Doc;
  // An update that did not replace the document: what it changed (update_description.ts).
  updateDescription?: UpdateDescription;
  // A chunk migration's write (MongoDB's field): no change stream event.
  fromMigrate?: boolean;
}

// An optime nobody wrote: the prevOpTime of a session's first entry, as MongoDB writes it.
export const NULL_OP_TIME: Doc = { ts: new Timestamp({ t: 0, i: 0 }), t: Long.fromNumber(-1) };

// The entry of one unit, committed at `ts` in `term`. A prepared transaction's commit logged after
// entries later than its commitTimestamp carries `commitTimestamp`: its writes' time (our own
// field: MongoDB logs such a commit as a commitTransaction command entry naming it). A transaction's commit is an applyOps
// whatever its size; any other unit's single op is logged as itself.
export function unitEntry(ops: readonly InnerOp[], ts: Timestamp, term: number, wall: Date, session: OperationSessionInfo | undefined, prevOpTime: Doc): Doc {
  const single = ops.length === 1 && session?.transaction !== true;
  const body: Doc = single ? { ...ops[0]! } : { op: 'c', ns: 'admin.$cmd', o: { applyOps: ops.map((o) => ({ ...o })) } };
  const stmtIds = session?.stmtIds;
  if (stmtIds !== undefined && stmtIds.length > 0) body.stmtId = stmtIds.length === 1 ? stmtIds[0]! : stmtIds;
  const entry: Doc = { ...body, ts, t: Long.fromNumber(term), v: Long.fromNumber(2), wall };
  if (session !== undefined) {
    entry.lsid = session.lsid;
    entry.txnNumber = Long.fromNumber(session.txnNumber);
    entry.prevOpTime = session.transaction === true ? NULL_OP_TIME : prevOpTime;
  }
  return entry;
}

// The "new primary" no-op and other no-ops: op 'n' with an empty namespace.
export function noopEntry(o: Doc, ts: Timestamp, term: number, wall: Date): Doc {
  return { op: 'n', ns: '', o, ts, t: Long.fromNumber(term), v: Long.fromNumber(2), wall };
}

// The command namespace of a database: where catalog entries are logged.
export function commandNs(db: string): string {
  return `${db}.$cmd`;
}

const OPS = new Set(['i', 'u', 'd', 'c', 'n']);
const COMMANDS = new Set(['create', 'drop', 'renameCollection', 'createIndexes', 'dropIndexes', 'collMod', 'dropDatabase', 'applyOps']);

// An entry as the applier may trust it. Throws a MongoError naming what is wrong: a missing or
// wrong-typed field, an op it does not know, a command it cannot apply.
export function checkOplogEntry(entry: unknown): asserts entry is Doc & { ts: Timestamp } {
  if (!isPlainObject(entry)) throw malformed(ErrorCodes.TypeMismatch, 'an oplog entry must be a document', entry);
  if (!(entry.ts instanceof Timestamp)) throw malformed(entry.ts === undefined ? ErrorCodes.NoSuchKey : ErrorCodes.TypeMismatch, "field 'ts' must be a timestamp", entry);
  if (!isNumber(entry.t)) throw malformed(entry.t === undefined ? ErrorCodes.NoSuchKey : ErrorCodes.TypeMismatch, "field 't' must be a number", entry);
  if (entry.commitTimestamp !== undefined && !(entry.commitTimestamp instanceof Timestamp && entry.commitTimestamp.lessThan(entry.ts))) throw malformed(ErrorCodes.TypeMismatch, "field 'commitTimestamp' must be a timestamp before the entry's", entry);
  checkOp(entry, entry, false);
}

function checkOp(op: Doc, entry: Doc, inner: boolean): void {
  if (typeof op.op !== 'string') throw malformed(op.op === undefined ? ErrorCodes.NoSuchKey : ErrorCodes.TypeMismatch, "field 'op' must be a string", entry);
  if (!OPS.has(op.op) || (inner && op.op === 'n')) throw malformed(ErrorCodes.BadValue, `unknown op '${op.op}'`, entry);
  if (typeof op.ns !== 'string') throw malformed(op.ns === undefined ? ErrorCodes.NoSuchKey : ErrorCodes.TypeMismatch, "field 'ns' must be a string", entry);
  if (!isPlainObject(op.o)) throw malformed(op.o === undefined ? ErrorCodes.NoSuchKey : ErrorCodes.TypeMismatch, "field 'o' must be a document", entry);
  if (op.ui !== undefined && (op.ui as { _bsontype?: string })._bsontype !== 'Binary') throw malformed(ErrorCodes.TypeMismatch, "field 'ui' must be a UUID", entry);
  if (op.op !== 'n' && op.op !== 'c' && !op.ns.includes('.')) throw malformed(ErrorCodes.BadValue, `'${op.ns}' is not a collection namespace`, entry);
  if (op.op === 'u' && (!isPlainObject(op.o2) || op.o2._id === undefined)) throw malformed(ErrorCodes.NoSuchKey, "an update needs 'o2' with the document's _id", entry);
  if ((op.op === 'i' || op.op === 'd') && op.o._id === undefined) throw malformed(ErrorCodes.NoSuchKey, "field 'o' needs an _id", entry);
  if (op.op !== 'c') return;
  const command = Object.keys(op.o)[0];
  if (command === undefined || !COMMANDS.has(command)) throw malformed(ErrorCodes.BadValue, `unknown command '${String(command)}'`, entry);
  if (command !== 'applyOps') return;
  if (inner) throw malformed(ErrorCodes.BadValue, 'applyOps may not nest', entry);
  const ops = op.o.applyOps;
  if (!Array.isArray(ops)) throw malformed(ErrorCodes.TypeMismatch, "field 'applyOps' must be an array", entry);
  for (const each of ops) {
    if (!isPlainObject(each)) throw malformed(ErrorCodes.TypeMismatch, 'each applyOps operation must be a document', entry);
    checkOp(each, entry, true);
  }
}

function malformed(code: number, why: string, entry: unknown): MongoError {
  const ts = isPlainObject(entry) && entry.ts instanceof Timestamp ? ` at Timestamp(${entry.ts.t}, ${entry.ts.i})` : '';
  return new MongoError(code, `malformed oplog entry${ts}: ${why}`);
}
