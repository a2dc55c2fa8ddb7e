import type { Timestamp } from 'bson';
import { errorReply } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import type { LogicalClock } from '../sessions/logical_clock.js';
import { clusterTimeMetadataBytes, clusterTimeOf } from '../sessions/logical_time_metadata.js';
import { afterClusterTimeOf, checkAfterClusterTime, checkAfterClusterTimeAllowed, snapshotReadOf } from '../sessions/read_concern_args.js';
import { LastOp, withLastOp } from '../storage/commit_timestamps.js';
import { RawDocument } from '../wire/raw_bson.js';
import { commandName } from './args.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { snapshotRead } from './snapshot_read.js';
import type { ReplicationWaits } from './replication_waits.js';
import { readTimestamp } from '../sessions/transaction_participant.js';

// Cluster time around every command a node runs, as a replica-set member answers (MongoDB's
// service entry point): the command's $clusterTime moves the node's clock (refused past
// maxAcceptableLogicalClockDriftSecs); a readConcern afterClusterTime is checked against the clock
// and waits for the commits up to it; a snapshot read on a replica-set member waits for the commit
// point to reach its time (ReplicationWaits.beforeSnapshotRead); the reply, error or not, carries the node's $clusterTime and
// the operationTime: the commit time of the last write unit the command stamped, or for a command
// that wrote nothing the node's cluster time, up to which every commit is applied (a standalone
// mongod sends neither and refuses afterClusterTime; docshard's nodes are shards first).
// What of a node its commands' cluster time needs.
interface ClusterTimeNode {
  readonly clock: LogicalClock;
  readonly storage: StorageEngine;
  // A replica-set member's waits for read and write concern (src/replication).
  readonly replicationWaits?: ReplicationWaits;
}

// `bounded`: the command's read concern wait within its maxTimeMS (the dispatcher's deadline), as
// MongoDB's waitForReadConcern honours the operation's deadline: a majority, snapshot or
// afterClusterTime read on a member that cannot get there (its secondaries gone, a primary cut off
// and not yet told) answers MaxTimeMSExpired rather than waiting for as long as that lasts.
export function withClusterTime(node: ClusterTimeNode, cmd: Doc, dispatch: () => Doc | Promise<Doc>, bounded: (wait: Promise<void>) => Promise<void> = (w) => w): Doc | Promise<Doc> {
  const lastOp = new LastOp();
  const name = commandName(cmd);
  let reply: Doc | Promise<Doc>;
  try {
    if (cmd.$clusterTime !== undefined) node.clock.advance(clusterTimeOf(cmd.$clusterTime));
    // A transaction's statements read its snapshot (transaction_participant.ts); its first may name
    // the time, which is waited for as a snapshot read's.
    const inTransaction = cmd.autocommit === false;
    const snapshot = inTransaction ? undefined : snapshotReadOf(name, cmd.readConcern, node.clock.now());
    const member = snapshot === undefined ? node.replicationWaits?.beforeRead(name, cmd) : { wait: node.replicationWaits?.beforeSnapshotRead(snapshot.atClusterTime), readAt: undefined };
    const majorityAt = member?.readAt;
    const run = snapshot !== undefined ? (): Doc | Promise<Doc> => snapshotRead(node.storage, snapshot.atClusterTime, dispatch)
      : majorityAt !== undefined ? (): Doc | Promise<Doc> => snapshotRead(node.storage, majorityAt(), dispatch, false)
        : dispatch;
    const readAt = snapshot?.atClusterTime ?? (inTransaction && cmd.startTransaction === true ? readTimestamp(cmd.readConcern) : undefined);
    const waited = chain(member?.wait, () => readConcernWait(node, cmd, readAt));
    reply = waited === undefined ? withLastOp(lastOp, run) : bounded(waited).then(() => withLastOp(lastOp, run), (err: unknown) => errorReply(err));
  } catch (err) {
    reply = errorReply(err);
  }
  const waits = node.replicationWaits;
  if (waits !== undefined) {
    const replicated = (r: Doc): Doc | Promise<Doc> => waits.afterCommand(name, cmd, r, lastOp);
    reply = reply instanceof Promise ? reply.then(replicated) : replicated(reply);
  }
  if (!(reply instanceof Promise)) return stamped(node.clock, reply, lastOp);
  return reply.then((r) => stamped(node.clock, r, lastOp));
}

// `first`, then whatever `next` gives to wait for; undefined when neither waits.
function chain(first: Promise<void> | undefined, next: () => Promise<void> | undefined): Promise<void> | undefined {
  if (first === undefined) return next();
  return first.then(() => next());
}

// On a node every commit is synchronous but a migration's batches (StorageEngine.writeAsync):
// a read after a time the clock has reached waits only for those. A snapshot read waits for the
// commits up to the time it reads at.
function readConcernWait(node: ClusterTimeNode, cmd: Doc, readAt: Timestamp | undefined): Promise<void> | undefined {
  const target = afterClusterTimeOf(cmd.readConcern) ?? readAt;
  if (target === undefined) return undefined;
  if (readAt === undefined) checkAfterClusterTimeAllowed(commandName(cmd));
  checkAfterClusterTime(target, node.clock.now());
  return node.storage.committedThrough(readAt ?? target);
}

function stamped(clock: LogicalClock, reply: Doc, lastOp: LastOp): Doc {
  const now = clock.now();
  return appendClusterAndOperationTime(reply, now, lastOp.ts ?? now);
}

// The reply with $clusterTime and operationTime as its last fields, in that order, as
// logical_time_metadata.ts's byte-level readers expect a node's reply to end. A reply that already
// has them (passed on from another node) is copied without them first.
export function appendClusterAndOperationTime(reply: Doc, clusterTime: Timestamp, operationTime: Timestamp): Doc {
  let out = reply;
  if ('$clusterTime' in reply || 'operationTime' in reply || Object.isFrozen(reply)) {
    out = {};
    for (const [k, v] of Object.entries(reply)) if (k !== '$clusterTime' && k !== 'operationTime') out[k] = v;
  }
  out.$clusterTime = new RawDocument(metadataBytes(clusterTime));
  out.operationTime = operationTime;
  return out;
}

// The clock answers the same Timestamp while it stands still, so its bytes are written once.
let cached: { time: Timestamp; bytes: Buffer } | undefined;

function metadataBytes(time: Timestamp): Buffer {
  if (cached?.time !== time) cached = { time, bytes: clusterTimeMetadataBytes(time) };
  return cached.bytes;
}
