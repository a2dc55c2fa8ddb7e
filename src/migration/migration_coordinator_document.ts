import { Long, type UUID } from 'bson';
import { bsonTag, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { shardVersionFromBSON, shardVersionToBSON, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkRange } from '../catalog/chunk_range.js';
import { IdlReader } from './idl_reader.js';

// The donor's record of one migration in config.migrationCoordinators (MongoDB's
// MigrationCoordinatorDocument). It is written before the recipient hears of the migration and
// deleted only after both shards have acted on the decision, so a restarted donor always knows
// which migration it must finish. `decision` is written before anything acts on it.
export type MigrationDecision = 'committed' | 'aborted';

export const MIGRATION_COORDINATORS_NS = 'config.migrationCoordinators';

export interface MigrationCoordinatorDocument {
  readonly _id: UUID;
  // The session the donor talks to the recipient in; optional here because nothing fences
  // recipient commands by txnNumber yet.
  readonly lsid?: { readonly id: UUID };
  readonly txnNumber?: Long;
  readonly nss: string;
  readonly collectionUuid: UUID;
  readonly donorShardId: string;
  readonly recipientShardId: string;
  readonly range: ChunkRange;
  // The moved chunk's version before the migration: recovery fences the config server with it
  // (_configsvrEnsureChunkVersionIsGreaterThan) so a delayed commit cannot land after an abort.
  readonly preMigrationChunkVersion: ChunkVersion;
  readonly decision?: MigrationDecision;
}

const STRUCT = 'migrationCoordinatorDocument';
const FIELDS = ['_id', 'lsid', 'txnNumber', 'nss', 'collectionUuid', 'donorShardId', 'recipientShardId', 'range', 'preMigrationChunkVersion', 'decision'] as const;
const DECISIONS: readonly MigrationDecision[] = ['committed', 'aborted'];

// Validates on the way out too (by reading the result back), so nothing invalid reaches disk.
export function migrationCoordinatorDocumentToBSON(doc: MigrationCoordinatorDocument): Doc {
  const out: Doc = { _id: doc._id };
  if (doc.lsid !== undefined) out.lsid = { id: doc.lsid.id };
  if (doc.txnNumber !== undefined) out.txnNumber = doc.txnNumber;
  out.nss = doc.nss;
  out.collectionUuid = doc.collectionUuid;
  out.donorShardId = doc.donorShardId;
  out.recipientShardId = doc.recipientShardId;
  out.range = { min: doc.range.min, max: doc.range.max };
  out.preMigrationChunkVersion = shardVersionToBSON(doc.preMigrationChunkVersion);
  if (doc.decision !== undefined) out.decision = doc.decision;
  migrationCoordinatorDocumentFromBSON(out);
  return out;
}

export function migrationCoordinatorDocumentFromBSON(raw: unknown): MigrationCoordinatorDocument {
  const r = IdlReader.of(STRUCT, raw);
  r.rejectUnknown(FIELDS);
  const doc: MigrationCoordinatorDocument = {
    _id: r.uuid('_id'),
    ...(r.has('lsid') ? { lsid: { id: IdlReader.of(`${STRUCT}.lsid`, r.doc('lsid')).uuid('id') } } : {}),
    ...(r.has('txnNumber') ? { txnNumber: readTxnNumber(r.raw.txnNumber) } : {}),
    nss: r.nss('nss'),
    collectionUuid: r.uuid('collectionUuid'),
    donorShardId: r.shardId('donorShardId'),
    recipientShardId: r.shardId('recipientShardId'),
    range: r.range('range'),
    preMigrationChunkVersion: shardVersionFromBSON(r.doc('preMigrationChunkVersion')),
    ...(r.has('decision') ? { decision: r.enumValue('decision', DECISIONS) } : {}),
  };
  validate(doc);
  return doc;
}

// What the IDL cannot say: a migration moves between two different shards, and a session comes
// with its transaction number.
function validate(doc: MigrationCoordinatorDocument): void {
  if (doc.donorShardId === doc.recipientShardId) {
    throw new MongoError(ErrorCodes.BadValue, `Destination shard cannot be the same as source shard ${doc.donorShardId}`);
  }
  if ((doc.lsid === undefined) !== (doc.txnNumber === undefined)) {
    throw new MongoError(ErrorCodes.BadValue, `${STRUCT} must carry both lsid and txnNumber or neither`);
  }
}

function readTxnNumber(v: unknown): Long {
  if (bsonTag(v) === 'Long') return v as Long;
  if (typeof v === 'number' && Number.isInteger(v)) return Long.fromNumber(v);
  throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${STRUCT}.txnNumber' is the wrong type, expected type 'long'`);
}
