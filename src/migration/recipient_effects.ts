import type { Timestamp, UUID } from 'bson';
import type { MongoError } from '../base/errors.js';
import type { ChunkRange } from '../catalog/chunk_range.js';
import type { Doc } from '../bson/values.js';
import type { RangeDeletionTask } from './range_deletion_task.js';

// What the recipient's state machine asks its driver to do. The ordering rules are the donor's
// (donor_effects.ts): one list at a time, in order, each effect started when the previous one
// completed. Classes:
//   persist  persistRangeDeletionTask: durable before the next effect; syncClonedDocuments:
//            the cloned documents, committed without waiting for the disk, flushed to it
//            before the catch-up starts (so before the recipient can report steady).
//   request  requestCloneBatch (_migrateClone) and requestTransferMods (_transferMods) to the
//            donor: complete once sent; the reply comes back as `cloneBatch` / `transferModsBatch`,
//            a failure as `failed`. At most one of them is outstanding at any time.
//   local    createCollectionAndIndexes (reads the donor's collection options and indexes),
//            applyCloneBatch (inserts) and applyMods (replaces `reload` by _id, deletes `deleted`
//            by _id): both complete once queued; their commits run behind the loop that fetches
//            batches, in the order queued, and every effect other than the next request or batch
//            waits for them; a failure is reported as `failed` and the rest of the list is dropped.
//   reply    the answer to a command from the donor.
// Because a batch is applied after the request for the next one is sent, fetching overlaps
// applying; because lists run in order, batches are still applied in the order they came; and
// because commits are awaited before any reply, the donor hears nothing that lets it commit or
// clean up before every batch is on disk.
export type RecipientEffect =
  | { readonly type: 'persistRangeDeletionTask'; readonly task: RangeDeletionTask }
  | { readonly type: 'createCollectionAndIndexes'; readonly nss: string; readonly collectionUuid: UUID; readonly donorShardId: string }
  | { readonly type: 'requestCloneBatch'; readonly donorShardId: string; readonly migrationId: UUID }
  | { readonly type: 'applyCloneBatch'; readonly nss: string; readonly documents: readonly Uint8Array[] }
  | { readonly type: 'syncClonedDocuments' }
  // `pause`: the last answer was empty, so the driver waits a moment before asking again.
  | { readonly type: 'requestTransferMods'; readonly donorShardId: string; readonly migrationId: UUID; readonly pause: boolean }
  | { readonly type: 'applyMods'; readonly nss: string; readonly deleted: readonly Uint8Array[]; readonly reload: readonly Uint8Array[] }
  // The sessions' retryable-write history of the range (_getNextSessionMods), asked once the drain
  // after the commit ended: the donor's writes are held, so it is all there is.
  | { readonly type: 'requestSessionMods'; readonly donorShardId: string; readonly migrationId: UUID; readonly after: unknown }
  // `last`: the batch that ends the history; the machine hears when it is on disk.
  | { readonly type: 'applySessionMods'; readonly nss: string; readonly migrationId: UUID; readonly entries: readonly Doc[]; readonly last: boolean }
  | { readonly type: 'reply'; readonly command: RecipientCommand; readonly result: RecvChunkStatus | MongoError };

export type RecipientCommand = '_recvChunkStart' | '_recvChunkStatus' | '_recvChunkCommit' | '_recvChunkAbort';

// The state names _recvChunkStatus reports, as MongoDB spells them.
export type RecipientStateName = 'ready' | 'clone' | 'catchup' | 'steady' | 'commitStart' | 'done' | 'fail' | 'abort';

// MongoDB's counts: documents and bytes cloned, and mods applied in catchup and in steady.
export interface RecipientCounts {
  readonly cloned: number;
  readonly clonedBytes: number;
  readonly catchup: number;
  readonly steady: number;
}

export interface RecvChunkStatus {
  readonly state: RecipientStateName;
  readonly counts: RecipientCounts;
  readonly errmsg?: string;
}

// _recvChunkStart's arguments, as the recipient needs them.
export interface RecvChunkStartRequest {
  readonly migrationId: UUID;
  readonly nss: string;
  readonly collectionUuid: UUID;
  readonly donorShardId: string;
  readonly recipientShardId: string;
  readonly range: ChunkRange;
  // The collection's shard key pattern (`shardKeyPattern`), kept in the range deletion task.
  readonly keyPattern?: Doc;
}

// Written before the first document arrives, so that an abort (decided by the donor) leaves a
// task that deletes whatever was copied in. It runs at once when made ready: nothing reads it.
// Every batch applied adds to its orphan counters: until the commit the copy is not this shard's.
export function recipientRangeDeletionTask(request: RecvChunkStartRequest, timestamp?: Timestamp): RangeDeletionTask {
  return {
    _id: request.migrationId,
    nss: request.nss,
    collectionUuid: request.collectionUuid,
    donorShardId: request.donorShardId,
    range: request.range,
    pending: true,
    processing: false,
    whenToClean: 'now',
    numOrphanDocs: 0,
    orphanedSizeBytes: 0,
    ...(timestamp !== undefined ? { timestamp } : {}),
    ...(request.keyPattern !== undefined ? { keyPattern: request.keyPattern } : {}),
  };
}
