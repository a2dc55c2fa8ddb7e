import { proxyToConfig } from './cluster_find.js';
import { ObjectId } from 'bson';
import type { LazyDocument } from '../../bson/raw_document.js';
import { errorReply, MongoError } from '../../base/errors.js';
import { codeNameOf, ErrorCodes } from '../../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { collectionArg, optionalBool, requireArray } from '../../command_layer/args.js';
import { checkBatchSize } from '../../command_layer/write_errors.js';
import { statementIds } from '../../sessions/retryable_write.js';
import { forwardableWrite } from '../remote_cursor_stream.js';
import { compileUpdate, upsertDocument } from '../../query/update/index.js';
import { getPath } from '../../query/path.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { receivedInserts, shardForReceivedInsert } from '../received_inserts.js';
import { shardThatRanStatement } from '../retried_statement_shard.js';
import { currentRouterTransaction } from '../transaction_router.js';
import { runAsTransaction } from './cluster_transactions.js';
import { shardForInsert, targetUpdateOrDelete } from '../targeter.js';
import { cachedRouting, getRouting, invalidateNamespace, isStaleError, MAX_STALE_RETRIES, sendToShard, sendVersioned, versionFields, type Routing } from '../versioned_request.js';

type WriteKind = 'insert' | 'update' | 'delete';
const STATEMENTS_FIELD: Record<WriteKind, string> = { insert: 'documents', update: 'updates', delete: 'deletes' };

interface Statement {
  index: number;
  // A retryable write's statement id, which the shard keys its history by: the client's, whatever
  // sub-batch the statement goes in and whichever router sends it.
  stmtId?: number;
  // Empty for an insert forwarded as received: its document is `received`.
  body: Doc;
  received?: LazyDocument;
}

const NO_BODY: Doc = Object.freeze({});

// Where one statement goes: one shard (batched with its neighbours), every targeted shard
// (multi-document writes), or, for a single-document write without the full shard key, the shard
// that holds the matching document (MongoDB 7.0's two-phase write without shard key).
type Target = { kind: 'one'; shard: string } | { kind: 'broadcast'; shards: string[] } | { kind: 'twoPhase'; shards: string[] };


function targetStatement(kind: WriteKind, routing: Routing, { body, received }: Statement): Target {
  const cm = routing.cm;
  if (!cm) return { kind: 'one', shard: routing.db.primary };
  if (kind === 'insert') return { kind: 'one', shard: received === undefined ? shardForInsert(cm, body) : shardForReceivedInsert(cm, received) };
  const filter = isPlainObject(body.q) ? body.q : {};
  const multi = kind === 'update' ? body.multi === true : !(isNumber(body.limit) && toDouble(body.limit) === 1);
  const t = targetUpdateOrDelete(cm, filter, multi);
  const shards = [...t.shards].sort();
  // An upsert that does not pin the shard key may have to insert on a shard its filter does not
  // reach: the two-phase path decides where the new document belongs.
  if (kind === 'update' && body.upsert === true && t.exactKey === undefined && !multi) return { kind: 'twoPhase', shards };
  if (shards.length === 1) return { kind: 'one', shard: shards[0]! };
  return t.singleWriteWithoutShardKey ? { kind: 'twoPhase', shards } : { kind: 'broadcast', shards };
}

// The reply being assembled for the client, in MongoDB's shape.
class WriteResult {
  n = 0;
  nModified = 0;
  upserted: Doc[] = [];
  errors: Doc[] = [];
  // Statement ids the shards did not run again (they carry the client's numbering).
  private readonly retried = new Set<number>();
  private readonly failedIndexes = new Set<number>();
  // The shards' write concern errors, and the labels they put on them: a write a shard stored but
  // could not get its write concern for (a step-down in the wait) is not acknowledged to the client,
  // which retries it (RetryableWriteError) where it may.
  private readonly writeConcernErrors: Doc[] = [];
  private readonly labels = new Set<string>();

  absorb(reply: Doc, statements: Statement[]): void {
    if (isPlainObject(reply.writeConcernError)) this.writeConcernErrors.push(reply.writeConcernError);
    for (const label of Array.isArray(reply.errorLabels) ? reply.errorLabels : []) if (typeof label === 'string') this.labels.add(label);
    if (isNumber(reply.n)) this.n += toDouble(reply.n);
    if (isNumber(reply.nModified)) this.nModified += toDouble(reply.nModified);
    for (const u of (reply.upserted as Doc[] | undefined) ?? []) this.upserted.push({ ...u, index: statements[Number(u.index)]!.index });
    for (const e of (reply.writeErrors as Doc[] | undefined) ?? []) this.addError({ ...e, index: statements[Number(e.index)]!.index });
    for (const id of (reply.retriedStmtIds as unknown[] | undefined) ?? []) if (isNumber(id)) this.retried.add(toDouble(id));
  }

  // The one statement's write error is settled after all (changeOwningShard): applied, or `err`.
  settle(index: number, err?: unknown): void {
    this.errors = this.errors.filter((e) => Number(e.index) !== index);
    this.failedIndexes.delete(index);
    if (err !== undefined) {
      this.fail(index, err);
      return;
    }
    this.n += 1;
    this.nModified += 1;
  }

  fail(index: number, err: unknown): void {
    const { ok: _ok, ...rest } = errorReply(err);
    this.addError({ index, ...rest });
  }

  // A statement sent to several shards that several refuse is still one write error (the first),
  // as mongos reports it.
  private addError(error: Doc): void {
    const index = Number(error.index);
    if (this.failedIndexes.has(index)) return;
    this.failedIndexes.add(index);
    this.errors.push(error);
  }

  reply(kind: WriteKind): Doc {
    const out: Doc = { n: this.n };
    if (kind === 'update') {
      out.nModified = this.nModified;
      if (this.upserted.length > 0) out.upserted = this.upserted.sort((a, b) => Number(a.index) - Number(b.index));
    }
    if (this.retried.size > 0) out.retriedStmtIds = [...this.retried].sort((a, b) => a - b);
    if (this.errors.length > 0) out.writeErrors = this.errors.sort((a, b) => Number(a.index) - Number(b.index));
    if (this.writeConcernErrors.length > 0) out.writeConcernError = mergedWriteConcernError(this.writeConcernErrors);
    if (this.labels.size > 0) out.errorLabels = [...this.labels];
    out.ok = 1;
    return out;
  }
}

async function runWrite(ctx: RouterContext, cmd: Doc, kind: WriteKind): Promise<Doc> {
  // The config server owns config and admin (sh.disableBalancing and sh.setBalancerState-style
  // helpers write config.collections and config.settings through the router).
  if (ctx.db === 'config' || ctx.db === 'admin') return proxyToConfig(ctx, cmd).finally(() => ctx.router.chunkSplitter.noteConfigWrite(ctx.db, cmd[kind]));
  const coll = collectionArg(cmd);
  const ns = `${ctx.db}.${coll}`;
  const received = kind === 'insert' ? receivedInserts(cmd) : undefined;
  const raw = received ?? requireArray(cmd, STATEMENTS_FIELD[kind]);
  checkBatchSize(raw.length);
  const ordered = optionalBool(cmd, 'ordered') ?? true;
  // A 7.0 server refuses `sort` in update statements (8.0 added it) before running any of them.
  if (kind === 'update' && raw.some((u) => isPlainObject(u) && u.sort !== undefined)) {
    throw new MongoError(40415, "BSON field 'update.updates.sort' is an unknown field.");
  }
  const base = forwardableWrite(cmd, STATEMENTS_FIELD[kind]);
  const result = new WriteResult();
  let pending: Statement[] = received === undefined ? decodedStatements(kind, raw) : received.map((doc, index) => ({ index, body: NO_BODY, received: doc }));
  if (base.txnNumber !== undefined) {
    const ids = statementIds(cmd, raw.length);
    pending = pending.map((s) => ({ ...s, stmtId: ids[s.index] }));
  }
  for (let tries = 0; pending.length > 0; tries++) {
    const routing = cachedRouting(ctx.router, ns) ?? await getRouting(ctx.router, ns, true);
    const retry: Statement[] = [];
    const stopped = await executeRound(ctx, routing, kind, base, pending, ordered, result, retry);
    if (retry.length > 0) {
      invalidateNamespace(ctx.router, ns);
      if (tries >= MAX_STALE_RETRIES) {
        for (const s of retry) result.fail(s.index, new MongoError(ErrorCodes.StaleConfig, `routing information for ${ns} kept changing`));
        break;
      }
    }
    if (stopped) break;
    pending = retry;
  }
  if (kind === 'update' && raw.length === 1) await changeOwningShard(ctx, cmd, ns, coll, result);
  return result.reply(kind);
}

// MongoDB's mongos answer to WouldChangeOwningShard (an update of one document's shard key to a
// range another shard owns, refused by the shard with the document before and after): the
// document is deleted where it is and inserted where it belongs, in the user's transaction or, for
// a retryable write, in a transaction under the write's own lsid and txnNumber; the update then
// answers as if applied. Its retry reaches a shard that committed that transaction, which answers
// IncompleteTransactionHistory (convertedToTransaction): the move happened, and the retry answers
// the same (MongoDB leaves that error to the client). Only a one-statement update, as in MongoDB.
async function changeOwningShard(ctx: RouterContext, cmd: Doc, ns: string, coll: string, result: WriteResult): Promise<void> {
  const error = result.errors[0];
  if (error === undefined) return;
  const info = isPlainObject(error.errInfo) ? error.errInfo : {};
  const index = Number(error.index);
  if (error.code === ErrorCodes.IncompleteTransactionHistory && info.convertedToTransaction === true) {
    result.settle(index);
    return;
  }
  if (error.code !== ErrorCodes.WouldChangeOwningShard || !isPlainObject(info.preImage) || !isPlainObject(info.postImage)) return;
  const pre = info.preImage;
  const post = info.postImage;
  const move = async (): Promise<void> => {
    // The shard key's fields as the document has them (a hashed field by its value), so the
    // delete targets the one shard that holds the document.
    const routing = await getRouting(ctx.router, ns, true);
    const q: Doc = { _id: pre._id };
    for (const field of Object.keys(routing.cm?.keyPattern ?? {})) q[field] = getPath(pre, field) ?? null;
    const deleted = await runWrite(ctx, { delete: coll, deletes: [{ q, limit: 1 }] }, 'delete');
    throwFirstWriteError(deleted);
    if (deleted.n !== 1) throw new MongoError(ErrorCodes.WriteConflict, 'The document changed before the update could move it to the shard that owns its new shard key');
    throwFirstWriteError(await runWrite(ctx, { insert: coll, documents: [post] }, 'insert'));
  };
  try {
    if (currentRouterTransaction() !== undefined) await move();
    else await runAsTransaction(ctx, cmd, move);
  } catch (err) {
    if (!(err instanceof MongoError)) throw err;
    result.settle(index, err);
    return;
  }
  result.settle(index);
}

function throwFirstWriteError(reply: Doc): void {
  const [first] = (reply.writeErrors as Doc[] | undefined) ?? [];
  if (first !== undefined) throw new MongoError(Number(first.code), String(first.errmsg));
}

// mongos gives documents their _id, so a statement targets the same shard on every retry.
function decodedStatements(kind: WriteKind, raw: unknown[]): Statement[] {
  return raw.map((b, index) => ({ index, body: kind === 'insert' && isPlainObject(b) && b._id === undefined ? { _id: new ObjectId(), ...b } : b as Doc }));
}

// One pass over the pending statements with one routing table. Statements whose shard answered
// stale go to `retry`; returns true when an ordered batch stopped at an error.
async function executeRound(ctx: RouterContext, routing: Routing, kind: WriteKind, base: Doc, pending: Statement[], ordered: boolean, result: WriteResult, retry: Statement[]): Promise<boolean> {
  const targeted: { statement: Statement; target: Target }[] = [];
  for (const statement of pending) {
    try {
      targeted.push({ statement, target: targetStatement(kind, routing, statement) });
    } catch (err) {
      if (!(err instanceof MongoError)) throw err;
      result.fail(statement.index, err);
      if (ordered) break;
    }
  }
  const groups: Group[] = [];
  for (const { statement, target } of targeted) {
    const last = groups[groups.length - 1];
    const byShard = target.kind === 'one' ? groups.find((g) => g.target.kind === 'one' && g.shard === target.shard) : undefined;
    if (target.kind === 'one' && ordered && last && last.target.kind === 'one' && last.shard === target.shard) last.statements.push(statement);
    else if (target.kind === 'one' && !ordered && byShard) byShard.statements.push(statement);
    else groups.push({ shard: target.kind === 'one' ? target.shard : undefined, target, statements: [statement] });
  }
  if (!ordered) {
    await Promise.all(groups.map((g) => runGroup(ctx, routing, kind, base, g, ordered, result, retry)));
    return false;
  }
  for (let i = 0; i < groups.length; i++) {
    const staleBefore = retry.length;
    const failed = await runGroup(ctx, routing, kind, base, groups[i]!, ordered, result, retry);
    if (retry.length > staleBefore) {
      for (const g of groups.slice(i + 1)) retry.push(...g.statements);
      return false;
    }
    if (failed) return true;
  }
  return targeted.length < pending.length;
}

interface Group {
  shard?: string;
  target: Target;
  statements: Statement[];
}

// Sends one group; its statements go to `retry` when a shard answered stale. Returns whether the
// group added a write error (or went stale).
async function runGroup(ctx: RouterContext, routing: Routing, kind: WriteKind, base: Doc, g: Group, ordered: boolean, result: WriteResult, retry: Statement[]): Promise<boolean> {
  const errorsBefore = result.errors.length;
  try {
    if (g.target.kind === 'one') await sendBatch(ctx, routing, kind, base, g.target.shard, g.statements, result);
    else if (g.target.kind === 'broadcast') await broadcast(ctx, routing, kind, base, g.target.shards, g.statements[0]!, result);
    else await twoPhase(ctx, routing, kind, base, g.target.shards, g.statements[0]!, result);
  } catch (err) {
    if (isStaleError(err)) {
      retry.push(...g.statements);
      return true;
    }
    failStatements(result, g.statements, ordered, err);
  }
  return result.errors.length > errorsBefore;
}

// A group's send failed with `err` (not stale): each statement failed, or the first if ordered.
function failStatements(result: WriteResult, statements: Statement[], ordered: boolean, err: unknown): void {
  if (!(err instanceof MongoError)) throw err;
  for (const s of statements) {
    result.fail(s.index, err);
    if (ordered) break;
  }
}

// runWrite's reply to an insert of `count` documents, or an update of one statement, sent whole to
// one shard in one round, from what came back: the shard's reply (not stale, and for an update no
// write error changeOwningShard answers), or the error that stopped the send.
export function oneShardWriteReply(kind: 'insert' | 'update', count: number, ordered: boolean, outcome: Doc | MongoError): Doc {
  const result = new WriteResult();
  const statements = Array.from({ length: count }, (_, index): Statement => ({ index, body: NO_BODY }));
  try {
    if (outcome instanceof MongoError) throw outcome;
    throwUnlessOk(outcome);
    result.absorb(outcome, statements);
  } catch (err) {
    failStatements(result, statements, ordered, err);
  }
  return result.reply(kind);
}

// One shard's write concern error as it is; several as one, as mongos reports them: the code
// they share, else WriteConcernFailed, and every message.
function mergedWriteConcernError(errors: readonly Doc[]): Doc {
  if (errors.length === 1) return errors[0]!;
  const code = errors.every((e) => e.code === errors[0]!.code) ? Number(errors[0]!.code) : ErrorCodes.WriteConcernFailed;
  return { code, codeName: codeNameOf(code), errmsg: `multiple errors reported : ${errors.map((e) => String(e.errmsg)).join('; ')}` };
}

async function sendBatch(ctx: RouterContext, routing: Routing, kind: WriteKind, base: Doc, shard: string, statements: Statement[], result: WriteResult): Promise<void> {
  // A batch's statements all came one way: received inserts, or decoded statements.
  const docs = statements[0]!.received === undefined ? undefined : statements.map((s) => s.received!);
  const reply = docs === undefined
    ? await sendVersioned(ctx.router, routing, shard, ctx.db, { ...withStmtIds(base, statements), [STATEMENTS_FIELD[kind]]: statements.map((s) => s.body) })
    : await sendVersioned(ctx.router, routing, shard, ctx.db, withStmtIds(base, statements), { identifier: 'documents', documents: docs.map((d) => d.bytes) });
  throwUnlessOk(reply);
  result.absorb(reply, statements);
  // Auto-splitting counts the bytes written per chunk; any check runs off this path.
  if (routing.cm && kind !== 'delete') {
    if (docs === undefined) ctx.router.chunkSplitter.noteWrites(routing.cm, kind, statements.map((s) => s.body), reply);
    else ctx.router.chunkSplitter.noteReceivedInserts(routing.cm, docs, reply);
  }
}

async function broadcast(ctx: RouterContext, routing: Routing, kind: WriteKind, base: Doc, shards: string[], statement: Statement, result: WriteResult): Promise<void> {
  const replies = await Promise.all(shards.map((shard) => sendToShard(ctx.router, shard, ctx.db, { ...withStmtIds(base, [statement]), [STATEMENTS_FIELD[kind]]: [statement.body], ...versionFields(routing, shard) })));
  for (const reply of replies) throwUnlessOk(reply);
  for (const reply of replies) result.absorb(reply, [statement]);
}

// Finds which shard holds a document matching the filter, then writes it there by _id as well,
// so exactly one document is written even though the filter reaches several shards; a retried
// statement goes to the shard where it ran.
async function twoPhase(ctx: RouterContext, routing: Routing, kind: WriteKind, base: Doc, shards: string[], statement: Statement, result: WriteResult): Promise<void> {
  const ran = await shardThatRanStatement(ctx.router, routing.cm!, base, statement.stmtId ?? 0);
  if (ran !== undefined) {
    const reply = await sendToShard(ctx.router, ran, ctx.db, { ...withStmtIds(base, [statement]), [STATEMENTS_FIELD[kind]]: [statement.body], ...versionFields(routing, ran) });
    throwUnlessOk(reply);
    result.absorb(reply, [statement]);
    return;
  }
  const coll = String(base[kind]);
  const filter = statement.body.q as Doc;
  const lookup: Doc = { find: coll, filter, limit: 1, singleBatch: true, projection: { _id: 1 } };
  if (statement.body.collation !== undefined) lookup.collation = statement.body.collation;
  if (base.let !== undefined) lookup.let = base.let;
  for (const shard of shards) {
    const found = await sendToShard(ctx.router, shard, ctx.db, { ...lookup, ...versionFields(routing, shard) });
    throwUnlessOk(found);
    const [doc] = ((found.cursor as Doc).firstBatch as Doc[]);
    if (!doc) continue;
    const body = { ...statement.body, q: { $and: [filter, { _id: doc._id }] } };
    const reply = await sendToShard(ctx.router, shard, ctx.db, { ...withStmtIds(base, [statement]), [STATEMENTS_FIELD[kind]]: [body], ...versionFields(routing, shard) });
    throwUnlessOk(reply);
    result.absorb(reply, [statement]);
    return;
  }
  if (kind === 'update' && statement.body.upsert === true) await upsertWithoutShardKey(ctx, routing, base, statement, result);
}

// No document matched anywhere: build the document the upsert would insert, give it its _id here,
// and send the upsert, pinned to that _id, to the shard that owns its shard key.
async function upsertWithoutShardKey(ctx: RouterContext, routing: Routing, base: Doc, statement: Statement, result: WriteResult): Promise<void> {
  const filter = statement.body.q as Doc;
  const update = compileUpdate(statement.body.u as Doc | Doc[], { arrayFilters: statement.body.arrayFilters as Doc[] | undefined, variables: base.let as Doc | undefined });
  const doc = upsertDocument(filter, update, { now: new Date(ctx.router.wallClock.now()) });
  const id = doc._id === undefined ? new ObjectId() : doc._id;
  const shard = shardForInsert(routing.cm!, { ...doc, _id: id });
  const body = { ...statement.body, q: { $and: [filter, { _id: id }] } };
  const reply = await sendToShard(ctx.router, shard, ctx.db, { ...withStmtIds(base, [statement]), updates: [body], ...versionFields(routing, shard) });
  throwUnlessOk(reply);
  result.absorb(reply, [statement]);
}

// A retryable write's sub-batch names its statements' ids (stmtIds), as mongos sends them.
function withStmtIds(base: Doc, statements: readonly Statement[]): Doc {
  if (base.txnNumber === undefined) return base;
  return { ...base, stmtIds: statements.map((s) => s.stmtId) };
}

function throwUnlessOk(reply: Doc): void {
  if (reply.ok === 1) return;
  const { ok: _ok, errmsg, code, ...extra } = reply;
  throw new MongoError(typeof code === 'number' ? code : ErrorCodes.InternalError, String(errmsg ?? 'shard write failed'), extra);
}

export const clusterInsertCommand: RouterCommand = { names: ['insert'], run: (ctx, cmd) => runWrite(ctx, cmd, 'insert') };
export const clusterUpdateCommand: RouterCommand = { names: ['update'], run: (ctx, cmd) => runWrite(ctx, cmd, 'update') };
export const clusterDeleteCommand: RouterCommand = { names: ['delete'], run: (ctx, cmd) => runWrite(ctx, cmd, 'delete') };
