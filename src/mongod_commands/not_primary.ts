import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import type { MongodServices } from './command.js';

// MongoDB's allowedOnSecondary, for the commands it matters to: writes run only on a writable
// primary (kNever); reads run on a secondary only when the client opted in (kOptIn) with a read
// preference other than primary. Everything else (hello, replSet*, diagnostics) runs anywhere.
const WRITES = new Set([
  'insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'create', 'drop', 'dropDatabase', 'createIndexes', 'dropIndexes',
  'deleteIndexes', 'collMod', 'renameCollection',
]);
// What else a primary alone decides (kNever too): a transaction's end and its votes, a migration's
// and a DDL operation's steps. A secondary that ran them would answer from what it holds in memory
// (no transaction, no migration): a coordinator took its NoSuchTransaction to a commit for an
// acknowledgment while the set's primary still held the transaction prepared.
const PRIMARY_DECISIONS = new Set([
  'commitTransaction', 'abortTransaction', 'prepareTransaction', 'coordinateCommitTransaction',
  '_recvChunkStart', '_recvChunkStatus', '_recvChunkCommit', '_recvChunkAbort', '_migrateClone', '_transferMods', '_getNextSessionMods',
]);
// The shard-server commands a secondary may answer: they only read.
const SHARDSVR_READS = new Set(['_shardsvrGetStatsForBalancing', '_shardsvrCheckMetadataConsistency', '_shardsvrCheckMetadataConsistencyParticipant']);
const READS = new Set(['find', 'count', 'distinct', 'aggregate', 'listCollections', 'listIndexes', 'collStats', 'dbStats', 'dbstats', 'explain']);

function secondaryOk(cmd: Doc): boolean {
  const rp = cmd.$readPreference;
  return typeof rp === 'object' && rp !== null && typeof (rp as Doc).mode === 'string' && (rp as Doc).mode !== 'primary';
}

// On a --replSet member that is not a writable primary: a write, a transaction's statement or end,
// or a migration's or DDL operation's step answers NotWritablePrimary, a read
// without secondaryOk NotPrimaryNoSecondaryOk, and one with it NotPrimaryOrSecondary while the
// member holds nothing readable (STARTUP2, ROLLBACK, no config). The local database is the
// member's own and is never refused.
export function refuseUnlessPrimary(node: MongodServices, name: string, db: string, cmd: Doc): void {
  const repl = node.replication;
  if (repl === undefined || db === 'local' || repl.isWritablePrimary()) return;
  const topologyVersion = repl.topologyVersion();
  // A config server's catalog commands run on its primary only: addShard on a secondary would tell
  // the shard its identity and then fail to write config.shards.
  if (WRITES.has(name) || PRIMARY_DECISIONS.has(name) || cmd.autocommit === false || name.startsWith('_configsvr') || (name.startsWith('_shardsvr') && !SHARDSVR_READS.has(name))) throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary', { topologyVersion });
  if (!READS.has(name)) return;
  if (!secondaryOk(cmd)) throw new MongoError(ErrorCodes.NotPrimaryNoSecondaryOk, 'not primary and secondaryOk=false', { topologyVersion });
  if (!repl.canServeReads()) throw new MongoError(ErrorCodes.NotPrimaryOrSecondary, 'node is not in primary or recovering state', { topologyVersion });
}

// MongoDB's NotPrimaryError category (error_codes.yml).
const NOT_PRIMARY_ERRORS: ReadonlySet<number> = new Set([
  ErrorCodes.NotWritablePrimary, ErrorCodes.NotPrimaryNoSecondaryOk, ErrorCodes.NotPrimaryOrSecondary,
  ErrorCodes.PrimarySteppedDown, ErrorCodes.InterruptedDueToReplStateChange,
]);

const isNotPrimaryError = (code: unknown): boolean => isNumber(code) && NOT_PRIMARY_ERRORS.has(toDouble(code));

// A --replSet member's reply that failed, or whose write concern failed, with a NotPrimaryError
// carries the member's topologyVersion wherever the error came from (a failCommand fail point
// too), as mongod's appendErrorLabelsAndTopologyVersion adds it. A driver compares it with the one
// its monitor last saw: when it is no newer, the error is stale and the driver keeps the member's
// description and retries at once; without one it marks the member Unknown and waits for its
// monitor's next check, which a monitor streaming hello makes only when the member's topology
// changes or heartbeatFrequencyMS ends (10 s). A ShutdownError carries one only in MongoDB's
// shutdown quiesce mode, which docshard does not have.
export function withStateChangeTopologyVersion(node: MongodServices, reply: Doc): Doc {
  const repl = node.replication;
  if (repl === undefined || (reply.ok === 1 && reply.writeConcernError === undefined) || reply.topologyVersion !== undefined) return reply;
  const writeConcernError = reply.writeConcernError;
  if (!isNotPrimaryError(reply.code) && !(isPlainObject(writeConcernError) && isNotPrimaryError(writeConcernError.code))) return reply;
  return { ...reply, topologyVersion: repl.topologyVersion() };
}
