import { hostname } from 'node:os';
import { compareValues } from '../../bson/compare.js';
import type { Doc } from '../../bson/values.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON } from '../../migration/range_deletion_task.js';
import { isConfigServerServices, isShardServices, type CommandDefinition, type MongodServices } from '../command.js';
import { CURRENT_OP_COMMAND_OPTIONS } from '../../command_layer/current_op_stage.js';
import { operationsInFlightOf } from '../../command_layer/operations_in_flight.js';

// currentOp (admin): the operations in flight this node knows of. docshard reports the background
// work of chunk migration, as mongod does: the donation (the _shardsvrMoveRange command), the
// reception (migrateThread, started by _recvChunkStart) and the range deletions being run, and the
// DDL coordinators running on a primary shard (desc, command, currentPhase), a resharding's
// recipients on a shard and its coordinator on the config server; and, as mongod does, the
// two-phase commits this shard coordinates (desc TransactionCoordinator) and the transactions
// prepared here that wait for their decision (idle sessions), which hold back other requests on
// their collections. Each names the host that reports it (hostname:port, as serverStatus does),
// which a router's $currentOp passes on beside the shard. A filter is matched by equality on
// top-level fields of each entry. After them, as mongod lists them, the clients' requests in
// flight: what a request waiting on this node waits in shows here, wherever it waits.
export const currentOpCommand: CommandDefinition = {
  names: ['currentOp'],
  adminOnly: true,
  run(ctx, cmd) {
    const filter = Object.entries(cmd).filter(([k]) => !CURRENT_OP_COMMAND_OPTIONS.has(k));
    const inprog = currentOperations(ctx.node).filter((op) => filter.every(([k, v]) => op[k] !== undefined && compareValues(op[k], v) === 0));
    return { inprog, ok: 1 };
  },
};

// The node's background work, then its clients' requests.
export function currentOperations(node: MongodServices): Doc[] {
  const now = node.wallClock.now();
  const base = { host: `${hostname()}:${node.options.port}`, currentOpTime: new Date(now).toISOString() };
  return [...migrationOperations(node), ...operationsInFlightOf(node).list(now).map((op) => ({ ...base, ...op }))];
}

// One entry per migration, range deletion or DDL coordinator in flight on this node (shards only).
function migrationOperations(node: MongodServices): Doc[] {
  const now = node.wallClock.now();
  if (isConfigServerServices(node)) {
    return node.resharding.currentOps().map((op, i) => ({ type: 'op', host: `${hostname()}:${node.options.port}`, active: true, currentOpTime: new Date(now).toISOString(), opid: i + 1, ...op }));
  }
  if (!isShardServices(node)) return [];
  const ops: Doc[] = [];
  const timing = (startedAt: Date | undefined): Doc => {
    const micros = startedAt === undefined ? 0 : (now - startedAt.getTime()) * 1000;
    return { secs_running: Math.floor(micros / 1_000_000), microsecs_running: micros };
  };
  const base = { type: 'op', host: `${hostname()}:${node.options.port}`, active: true, currentOpTime: new Date(now).toISOString() };
  let opid = 0;

  const source = node.migrations.source;
  if (source !== undefined) {
    const d = source.doc;
    const p = source.progress;
    ops.push({
      ...base, desc: 'MoveChunk', opid: ++opid, ...timing(source.startedAt), op: 'command', ns: d.nss,
      command: { _shardsvrMoveRange: d.nss, toShard: d.recipientShardId, min: d.range.min, max: d.range.max, waitForDelete: source.waitForDelete, $db: 'admin' },
      msg: `migration ${d._id.toHexString()} ${source.phase}`,
      migrationId: d._id, role: 'donor', phase: source.phase, donorShardId: d.donorShardId, recipientShardId: d.recipientShardId,
      recipientState: p.recipientState ?? null, clonedDocs: p.clonedDocs, clonedBytes: p.clonedBytes, transferModsPending: p.transferModsPending,
    });
  }

  const destination = node.migrations.destination;
  if (destination !== undefined && !destination.done) {
    const r = destination.request;
    const { counts, state } = destination.status();
    ops.push({
      ...base, desc: 'migrateThread', opid: ++opid, ...timing(destination.startedAt), op: 'command', ns: r.nss,
      command: {
        _recvChunkStart: r.nss, sessionId: r.migrationId, from: destination.donorHost, fromShardName: r.donorShardId, toShardName: r.recipientShardId,
        min: r.range.min, max: r.range.max, uuid: r.collectionUuid, $db: 'admin',
      },
      msg: `migration ${r.migrationId.toHexString()} ${state}`,
      migrationId: r.migrationId, role: 'recipient', phase: destination.phase, state, donorShardId: r.donorShardId, recipientShardId: r.recipientShardId,
      clonedDocs: counts.cloned, clonedBytes: counts.clonedBytes, catchupMods: counts.catchup, steadyMods: counts.steady,
      transferModsBatches: destination.transferModsBatches,
    });
  }

  for (const raw of node.local.find(RANGE_DELETIONS_NS)) {
    const task = rangeDeletionTaskFromBSON(raw);
    if (task.pending || !node.migrations.rangeDeleter.isRunning(task._id)) continue;
    ops.push({
      ...base, desc: 'range-deleter', opid: ++opid, op: 'command', ns: task.nss,
      command: { rangeDeletion: task.nss, taskId: task._id, min: task.range.min, max: task.range.max, whenToClean: task.whenToClean },
      msg: `deleting range of ${task.nss}`, taskId: task._id, whenToClean: task.whenToClean,
    });
  }
  for (const op of node.ddl.coordinators.currentOps()) ops.push({ ...base, opid: ++opid, ...op });
  for (const op of node.reshardingRecipients.currentOps()) ops.push({ ...base, opid: ++opid, ...op });
  for (const c of node.transactionCoordinators.currentOps()) {
    ops.push({
      ...base, desc: 'TransactionCoordinator', opid: ++opid, ...timing(new Date(c.startedMs)), op: 'command',
      twoPhaseCommitCoordinator: { lsid: c.lsid, txnNumber: c.txnNumber, numParticipants: c.numParticipants, state: c.phase, ...(c.effect === undefined ? {} : { step: c.effect }) },
    });
  }
  for (const p of node.transactions.preparedTransactions()) {
    ops.push({
      ...base, type: 'idleSession', active: false, desc: 'inactive transaction', lsid: p.lsid,
      transaction: { parameters: { txnNumber: p.txnNumber, autocommit: false }, prepareTimestamp: p.prepareTimestamp, timePreparedMicros: (now - p.preparedMs) * 1000, namespaces: p.namespaces },
    });
  }
  return ops;
}
