import type { Binary, Timestamp } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { AbortReason } from './resharding_coordinator_state_machine.js';
import type { DonorProgress, RecipientProgress, RecipientState } from './recipient_state_machine.js';
import type { RangeOwner, RecipientParams } from './resharding_recipient.js';

// A recipient's state document in config.localReshardingOperations.recipient: everything it was
// started with, so that a restart or a step-up starts it again from the document alone, and its
// progress (state, each donor's clone done and last applied resume token, the abort reason).
export function recipientDocument(p: RecipientParams, progress: RecipientProgress): Doc {
  return {
    ns: p.ns, tempReshardingNss: p.tempNs, sourceUUID: p.sourceUUID, sourceKey: p.sourceKey, reshardingKey: p.reshardingKey, cloneTimestamp: p.cloneTimestamp,
    donorShards: p.donors.map((d) => ({ shardId: d.shardId, host: d.host })), sourceChunks: p.sourceChunks, recipientChunks: p.recipientChunks,
    recipientShardId: p.shardId,
    ...progressFields(progress),
  };
}

// The fields a persist of the progress sets.
export function progressFields(p: RecipientProgress): Doc {
  return {
    state: p.state,
    donorProgress: p.donors.map((d) => ({ shardId: d.shardId, cloned: d.cloned, ...(d.resumeToken === undefined ? {} : { resumeToken: d.resumeToken }) })),
    ...(p.abortReason === undefined ? {} : { abortReason: p.abortReason }),
  };
}

export function recipientParamsOf(doc: Doc): RecipientParams {
  return {
    reshardingUUID: doc._id as Binary, ns: String(doc.ns), tempNs: String(doc.tempReshardingNss), sourceUUID: doc.sourceUUID as Binary,
    sourceKey: doc.sourceKey as Doc, reshardingKey: doc.reshardingKey as Doc, cloneTimestamp: doc.cloneTimestamp as Timestamp,
    donors: (doc.donorShards as Doc[]).map((d) => ({ shardId: String(d.shardId), host: String(d.host) })),
    sourceChunks: doc.sourceChunks as RangeOwner[], recipientChunks: doc.recipientChunks as RangeOwner[], shardId: String(doc.recipientShardId),
  };
}

export function recipientProgressOf(doc: Doc): RecipientProgress {
  const donors: DonorProgress[] = (doc.donorProgress as Doc[]).map((d) => ({
    shardId: String(d.shardId), cloned: d.cloned === true, ...(isPlainObject(d.resumeToken) ? { resumeToken: d.resumeToken } : {}),
  }));
  return { state: doc.state as RecipientState, donors, ...(doc.abortReason === undefined ? {} : { abortReason: doc.abortReason as AbortReason }) };
}
