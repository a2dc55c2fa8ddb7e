import { AsyncLocalStorage } from 'node:async_hooks';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { Network } from '../wire/network.js';
import { checkWriteConcern, fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { Clock } from '../base/clock.js';

// What coordinators reach the cluster through (MongoDB's sharding_ddl_util): the config server and
// every shard, by host, over the node's client.
export interface DDLCoordinatorEnv {
  readonly client: Network;
  configHost(): string | undefined;
  // The shard's wall clock: the times of the changelog entries its coordinators write.
  readonly clock: Clock;
  // The shard the coordinators run on, the database's primary: its database critical section
  // (persisted, restored at startup) and its cached database version, which a coordinator changes
  // in place as MongoDB's do through its ShardingRecoveryService.
  readonly primary: PrimaryShardState;
}

export interface PrimaryShardState {
  // Blocks the database's versioned writes; idempotent for the same reason.
  blockDatabaseWrites(db: string, reason: string): void;
  // Blocks the database's versioned requests, writes and reads; idempotent for the same reason.
  blockDatabase(db: string, reason: string): void;
  // Reloads the database's version from the config server, then lets the held requests go: they
  // check their version against what the DDL left.
  unblockDatabase(db: string, reason: string): Promise<void>;
}

export interface ParticipantShard {
  readonly _id: string;
  readonly host: string;
}

export function configHostOf(env: DDLCoordinatorEnv): string {
  const host = env.configHost();
  if (host === undefined) throw new MongoError(ErrorCodes.IllegalOperation, 'a DDL coordinator runs only on a shard that belongs to a cluster');
  return host;
}

export async function allShards(env: DDLCoordinatorEnv): Promise<ParticipantShard[]> {
  const shards = await fetchAll(env.client, configHostOf(env), 'config', { find: 'shards', sort: { _id: 1 } });
  return shards.map((s) => ({ _id: String(s._id), host: String(s.host) }));
}

// The session of the coordinator whose phase is running: every command a phase sends that changes
// something on a participant or the config server (ddl_phase_driver.ts's sends) goes as a
// retryable write of it (lsid and txnNumber), so that the participant can refuse one from before the coordinator's last recovery
// (src/mongod_commands/sharding/ddl_participant_session.ts).
const coordinatorSession = new AsyncLocalStorage<CoordinatorDocument['session']>();

export function withCoordinatorSession<T>(session: CoordinatorDocument['session'], fn: () => Promise<T>): Promise<T> {
  return coordinatorSession.run(session, fn);
}

function underSession(cmd: Doc): Doc {
  const session = coordinatorSession.getStore();
  return session === undefined ? cmd : { ...cmd, lsid: session.lsid, txnNumber: session.txnNumber };
}

// A participant command (a retryable write of the coordinator's session) to one host: its reply,
// ok or not.
export function commandUnderSession(env: DDLCoordinatorEnv, host: string, db: string, cmd: Doc): Promise<Doc> {
  return env.client.command(host, db, underSession(cmd));
}

// A participant command that must answer ok, its write concern met.
export async function onParticipant(env: DDLCoordinatorEnv, host: string, db: string, cmd: Doc): Promise<Doc> {
  return checkWriteConcern(await commandUnderSession(env, host, db, cmd));
}

// After a recovery, before its phase runs again: a no-op retryable write of the coordinator's new
// txnNumber on every shard and the config server (MongoDB's
// performNoopRetryableWriteOnAllShardsAndConfigsvr), so that each refuses from now on any command
// of the coordinator's txnNumber before the crash still on its way.
export async function performNoopRetryableWriteOnAllShardsAndConfigsvr(env: DDLCoordinatorEnv): Promise<void> {
  const hosts = [configHostOf(env), ...(await allShards(env)).map((s) => s.host)];
  await Promise.all(hosts.map(async (host) => {
    const reply = await onParticipant(env, host, 'admin', {
      update: 'system.version', updates: [{ q: { _id: 'shardingDDLCoordinatorRecoveryDoc' }, u: { $inc: { noopWriteCount: 1 } }, upsert: true }],
    });
    const [writeError] = (reply.writeErrors as Doc[] | undefined) ?? [];
    if (writeError !== undefined) throw new MongoError(Number(writeError.code), String(writeError.errmsg));
  }));
}

// The critical section a coordinator takes on the participants (_shardsvrParticipantBlock), named
// by the operation so that a participant refuses to let another release it.
export function criticalSectionReason(operation: string, ns: string): Doc {
  return { command: operation, ns };
}

export function splitNs(ns: string): { db: string; coll: string } {
  const dot = ns.indexOf('.');
  return { db: ns.slice(0, dot), coll: ns.slice(dot + 1) };
}
