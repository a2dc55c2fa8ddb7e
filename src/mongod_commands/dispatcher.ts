import { errorReply, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { CommandContext, CommandDefinition, CommandTable, MongodServices } from './command.js';
import type { ConnectionInfo } from '../command_layer/connection_info.js';
import { commandName } from '../command_layer/args.js';
import { isVersionedRequest } from '../shard/shard_metadata.js';
import { databaseCriticalSectionWait } from '../shard/database_critical_section.js';
import { runOnView } from './views/view_commands.js';
import { checkCommandFields } from '../command_layer/command_fields.js';
import { checkOperationSessionInfo, checkRetryableWriteCommand } from '../sessions/operation_session_info.js';
import { errorLabelsFor } from '../sessions/error_labels.js';
import { readTimestamp } from '../sessions/transaction_participant.js';
import { WriteWaitsForTransaction } from '../storage/storage_engine.js';
import { runInSession } from '../sessions/session_operation.js';
import { MONGOD_CURSOR_SESSION_CODES } from '../sessions/cursor_session.js';
import { refuseUnreplicatedWriteConcern } from '../command_layer/unreplicated_write_concern.js';
import { beforeDeadline, maxTimeExpired, withDeadline } from '../base/operation_deadline.js';
import { parseMaxTimeMS } from '../query/query_request_helper.js';
import { withClusterTime } from '../command_layer/operation_time.js';
import { withFailCommand } from '../command_layer/fail_command.js';
import { runTransactionStatement } from './transaction_commands.js';
import { isLoopback, requiresAuthentication } from '../auth/connection_auth.js';
import { USERS_NS } from '../auth/users.js';
import { checkAuthorization } from '../auth/authorization_policy.js';
import { authenticatedUser } from './auth/user_cache.js';
import { checkCursorOwner } from '../auth/cursor_owner.js';
import { authorizedReply } from '../auth/authorized_reply.js';
import { withOperationClock } from '../base/operation_clock.js';
import { refuseUnlessPrimary, withStateChangeTopologyVersion } from './not_primary.js';
import { withOplogQueryMetadata } from './oplog_query_metadata_reply.js';
import { currentReadView, withReadView } from '../command_layer/read_view.js';

// Every external and internal command enters here: look-up, role/flag checks, argument checks,
// error shaping, and cluster time (operation_time.ts: the command's $clusterTime taken in, its
// readConcern's afterClusterTime waited for, the node's time and the operation's on its reply).
// The reply is returned directly when nothing had to wait (the common case: no critical section
// held, not a routed request, a synchronous command), so such a request costs no promise.
// A node runs its commands with its role's services, which its table is typed with.
type NodeWithTable<S extends MongodServices> = S & { commands: CommandTable<S> };

export function dispatchCommand<S extends MongodServices>(node: NodeWithTable<S>, conn: ConnectionInfo, cmd: Doc): Doc | Promise<Doc> {
  const deadline = readConcernDeadline(cmd);
  const bounded = (wait: Promise<void>): Promise<void> => beforeDeadline(wait, deadline, node.wallClock);
  return withOplogQueryMetadata(node, cmd, withClusterTime(node, cmd, () => checkAndRun(node, conn, cmd), bounded));
}

// The deadline a read concern's wait runs under, from the command's maxTimeMS; a maxTimeMS that
// is no valid one is checkAndRun's to refuse, after the wait.
function readConcernDeadline(cmd: Doc): number | undefined {
  if (cmd.maxTimeMS === undefined || commandName(cmd) === 'getMore') return undefined;
  try {
    const maxTimeMS = parseMaxTimeMS(cmd.maxTimeMS);
    return maxTimeMS === 0 ? undefined : performance.now() + maxTimeMS;
  } catch {
    return undefined;
  }
}

function checkAndRun<S extends MongodServices>(node: NodeWithTable<S>, conn: ConnectionInfo, cmd: Doc): Doc | Promise<Doc> {
  try {
    const db = cmd.$db;
    if (typeof db !== 'string') {
      throw new MongoError(40571, 'OP_MSG requests require a $db argument');
    }
    const name = commandName(cmd);
    const def = lookup(node, name);
    if (def.adminOnly && db !== 'admin') {
      throw new MongoError(ErrorCodes.Unauthorized, `${def.names[0]} may only be run against the admin database.`);
    }
    if (node.options.auth === true) checkAuthorized(node, conn, def, name, db, cmd);
    const owner = node.options.auth === true ? conn.auth?.user : undefined;
    // As mongod: the command's own fields, then its session fields, then its write concern.
    checkCommandFields(name, cmd);
    checkOperationSessionInfo(cmd, true);
    if (def.retryableWrite !== true) checkRetryableWriteCommand(name, cmd);
    if (node.replicationWaits !== undefined) node.replicationWaits.checkWriteConcern(name, cmd);
    else refuseUnreplicatedWriteConcern(cmd);
    refuseUnlessPrimary(node, name, db, cmd);
    const deadline = operationDeadline(node, name, cmd);
    const ctx: CommandContext<S> = { node, conn, db };
    if (cmd.lsid !== undefined) node.sessions.touch(cmd.lsid, node.wallClock.now());
    const reply = withFailCommand(node.failPoints, node.wallClock, conn, { db, name, names: def.names, cmd, router: false }, () => runInSession(node.sessionKiller, node.cursors, MONGOD_CURSOR_SESSION_CODES, name, cmd, (interruptible) => {
      // Whatever the request waited for (a refresh, a critical section, a prepared transaction),
      // it is admitted again before it runs: a critical section entered meanwhile holds it too.
      const attempt = (): Doc | Promise<Doc> => {
        const admitted = admission(node, def, name, db, cmd);
        return admitted === undefined
          ? withOperationClock(node.wallClock, () => withDeadline(deadline, () => run(node, def, ctx, name, cmd)))
          : beforeDeadline(interruptible(admitted), deadline, node.wallClock).then(again);
      };
      // A snapshot or majority read's view (snapshot_read.ts) is ambient only while the command
      // runs synchronously: one that waited runs again inside it, or it would read the latest
      // state (a transaction committed since at a later time among it) and name its snapshot's.
      // A request that waited on a primary may find the member primary no more: a step-down lets
      // go of the prepared transactions it waited for, whose commits then come through
      // replication, at a later time than the one the other shards committed them at, so what it
      // would read here is not the snapshot it asked for. It ends as MongoDB's operations
      // interrupted by a step-down do (InterruptedDueToReplStateChange, which reads retry).
      const startedOnPrimary = node.replication?.isWritablePrimary() === true;
      const rerun = (): Doc | Promise<Doc> => {
        if (startedOnPrimary && node.replication?.isWritablePrimary() !== true) {
          throw new MongoError(ErrorCodes.InterruptedDueToReplStateChange, 'operation was interrupted because of a replication state change');
        }
        return attempt();
      };
      const view = currentReadView();
      const again = view === undefined ? rerun : (): Doc | Promise<Doc> => withReadView(view, rerun);
      return afterTransactionsEnd(attempt, again, (ended) => beforeDeadline(interruptible(ended), deadline, node.wallClock));
    }));
    const answered = reply instanceof Promise
      ? reply.then((r) => withStateChangeTopologyVersion(node, r), (err: unknown) => failure(node, err, cmd))
      : withStateChangeTopologyVersion(node, reply);
    if (owner === undefined) return answered;
    return answered instanceof Promise ? answered.then((r) => authorizedReply(node.cursors, owner, name, cmd, r)) : authorizedReply(node.cursors, owner, name, cmd, answered);
  } catch (err) {
    return failure(node, err, cmd);
  }
}

// A write outside transactions that met a key an open transaction wrote gave way
// (WriteWaitsForTransaction, its write unit rolled back whole): it runs again once that
// transaction ended, within its deadline, as MongoDB's write waits out the conflict.
function afterTransactionsEnd(first: () => Doc | Promise<Doc>, again: () => Doc | Promise<Doc>, wait: (ended: Promise<void>) => Promise<void>): Doc | Promise<Doc> {
  const retry = (err: unknown): Promise<Doc> => {
    if (!(err instanceof WriteWaitsForTransaction)) throw err;
    return wait(err.ended).then(() => afterTransactionsEnd(again, again, wait));
  };
  let out: Doc | Promise<Doc>;
  try {
    out = first();
  } catch (err) {
    return retry(err);
  }
  return out instanceof Promise ? out.catch(retry) : out;
}

// maxTimeMS as mongod reads it: a deadline for every command but getMore, whose maxTimeMS is how
// long an awaitData cursor waits (a cursor's other getMores run under what is left of the
// maxTimeMS of the command that opened it). Time spent waiting for a critical section counts.
// The maxTimeAlwaysTimeOut fail point expires any command that has one, as in MongoDB's tests.
function operationDeadline(node: MongodServices, name: string, cmd: Doc): number | undefined {
  const maxTimeMS = parseMaxTimeMS(cmd.maxTimeMS);
  if (maxTimeMS === 0 || name === 'getMore') return undefined;
  if (node.failPoints.shouldFire('maxTimeAlwaysTimeOut') !== undefined) throw maxTimeExpired();
  return performance.now() + maxTimeMS;
}

function run<S extends MongodServices>(node: MongodServices, def: CommandDefinition<S>, ctx: CommandContext<S>, name: string, cmd: Doc): Doc | Promise<Doc> {
  countCommand(node, name);
  const body = (): Doc | Promise<Doc> => runOnView(ctx, name, cmd) ?? def.run(ctx, cmd);
  return cmd.autocommit === false ? runTransactionStatement(node, name, ctx.db, cmd, body) : body();
}

// A command that failed before it wrote anything: a retryable write's retriable error says so with
// its labels, so the driver sends it again.
function failure(node: MongodServices, err: unknown, cmd: Doc): Doc {
  if (!(err instanceof MongoError)) node.logger.error({ err, c: 'COMMAND' }, 'command failed with an unexpected error');
  const reply = errorReply(err);
  if (cmd.autocommit === false && cmd.lsid !== undefined) node.transactions.statementFailed(cmd);
  const labels = errorLabelsFor(commandName(cmd), cmd, err instanceof MongoError ? err.code : undefined, undefined, false);
  if (labels.length > 0) reply.errorLabels = [...new Set([...((reply.errorLabels as string[] | undefined) ?? []), ...labels])];
  return withStateChangeTopologyVersion(node, reply);
}

// A migration's critical section holds writes to its collection back, and reads from the commit
// on; the version check that follows then sees the ownership the donor refreshed.
const CRITICAL_SECTION_WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify']);
const CRITICAL_SECTION_READS = new Set(['find', 'count', 'distinct', 'aggregate']);

// The first thing the request has to wait for before it runs, in this order: the decision of its
// session's prepared transaction when it is of a newer txnNumber
// (TransactionParticipants.preparedBefore), the decisions of transactions prepared on its
// collection (a read at a time before their prepare, or one at
// readConcern 'available', excepted:
// TransactionParticipants.preparedOn), a collection's or database's critical section that holds
// its kind of operation, the version check of a routed request. Undefined when there is nothing to
// wait for; once what it answered is over, the request asks again (`attempt` in dispatchCommand).
function admission(node: MongodServices, def: CommandDefinition<never>, name: string, db: string, cmd: Doc): Promise<void> | undefined {
  const behindPrepare = node.transactions.preparedBefore(cmd);
  if (behindPrepare !== undefined) return behindPrepare;
  const kind: 'write' | 'read' | undefined = CRITICAL_SECTION_WRITES.has(name) ? 'write' : CRITICAL_SECTION_READS.has(name) ? 'read' : undefined;
  const ns = kind === undefined ? undefined : targetNamespace(def, db, cmd, name);
  const cs = node.sharding.criticalSection;
  if (kind !== undefined && ns !== undefined) {
    const prepared = kind === 'read' && readsAvailable(cmd) ? undefined : node.transactions.preparedOn(ns, kind === 'read' && cmd.autocommit !== false ? readTimestamp(cmd.readConcern) : undefined);
    if (prepared !== undefined) return prepared;
    if (cs.blocks(ns, kind)) return cs.waitFor(ns, kind);
  }
  if (!isVersionedRequest(cmd)) return undefined;
  // A routed request whose versions match what the shard has loaded runs at once, as a direct one.
  return databaseCriticalSectionWait(cs, name, db, cmd) ?? node.sharding.metadata.admit(db, targetNamespace(def, db, cmd, name), cmd);
}

// A read with readConcern 'available' ignores prepare conflicts, as MongoDB's does: what it reads
// carries no guarantee anyway, and a member's initial sync clones so while transactions keep
// preparing on its sync source (the oplog it applies after brings their outcome).
function readsAvailable(cmd: Doc): boolean {
  const rc = cmd.readConcern;
  return isPlainObject(rc) && rc.level === 'available';
}

// With --auth, a connection that has not authenticated runs only what MongoDB lets it run
// (requiresAuth() false), and createUser from this host while no user exists (the localhost
// exception); one that has runs what its roles allow.
function checkAuthorized(node: MongodServices, conn: ConnectionInfo, def: CommandDefinition<never>, name: string, db: string, cmd: Doc): void {
  const user = authenticatedUser(node, conn);
  if (user !== undefined) {
    const refusal = checkAuthorization(user, name, db, cmd);
    if (refusal !== undefined) throw refusal;
    checkCursorOwner(node.cursors, user, name, cmd);
    return;
  }
  if (!requiresAuthentication(name)) return;
  if (name === 'createUser' && isLoopback(conn.remote) && node.local.findOne(USERS_NS) === undefined) return;
  throw new MongoError(ErrorCodes.Unauthorized, `command ${def.names[0]} requires authentication`);
}

function lookup<S extends MongodServices>(node: NodeWithTable<S>, name: string): CommandDefinition<S> {
  const table: CommandTable<S> = node.commands;
  const def = name === '' ? undefined : table.get(name);
  if (!def || (def.testOnly && !node.options.enableTestCommands)) {
    throw new MongoError(ErrorCodes.CommandNotFound, `no such command: '${name}'`);
  }
  return def;
}

function countCommand(node: MongodServices, name: string): void {
  const c = node.counters.opcounters;
  switch (name) {
    case 'find': c.query += 1; break;
    case 'getMore': c.getmore += 1; break;
    case 'insert': break;
    case 'update': break;
    case 'delete': break;
    default: c.command += 1;
  }
}

export function buildCommandTable<S>(defs: readonly CommandDefinition<S>[]): Map<string, CommandDefinition<S>> {
  const table = new Map<string, CommandDefinition<S>>();
  for (const def of defs) for (const name of def.names) table.set(name, def);
  return table;
}

// The collection a versioned command is about: the string value of its first field (find: "c"),
// or none for database-level commands (aggregate: 1).
function targetNamespace(def: CommandDefinition<never>, db: string, cmd: Doc, name: string): string | undefined {
  const value = cmd[name];
  if (typeof value !== 'string') return undefined;
  return def.wholeNamespace ? value : `${db}.${value}`;
}
