import type { Timestamp } from 'bson';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';

// MongoDB's TransactionCoordinator, its protocol (pure): a two-phase commit of a transaction that
// wrote on two or more shards, run by the shard the router names (its first participant) and
// checkpointed in config.transaction_coordinators, so that it reaches the same decision after a
// crash at any step.
//
//   router ─coordinateCommitTransaction{participants}─▶ coordinator
//     writeParticipantList   persist {_id: {lsid, txnNumber}, participants}
//     sendPrepare            prepareTransaction ─▶ every participant (each persists its writes,
//                            answers its prepareTimestamp, or refuses: a vote to abort)
//     writeDecision          persist decision: commit at the largest prepareTimestamp, or abort
//     sendDecision           commitTransaction{commitTimestamp} | abortTransaction ─▶ every participant,
//                            again until each answered
//     deleteCoordinatorDoc   then the router gets the decision
//
// A coordinator that restarts without a decision decides to abort (a participant may have lost
// its transaction in the same crash); one with a decision delivers it again. The steps' order is
// transaction_coordinator_state_machine.ts; this file holds the document and the decision rule.

export interface CoordinatorDocument {
  lsid: Doc;
  txnNumber: number;
  participants: string[];
  decision?: CoordinatorDecision;
}

export type CoordinatorDecision =
  | { decision: 'commit'; commitTimestamp: Timestamp }
  | { decision: 'abort'; abortStatus: { code: number; errmsg: string } };

// A participant's answer to prepareTransaction.
export type PrepareVote =
  | { shardId: string; prepareTimestamp: Timestamp }
  | { shardId: string; code: number; errmsg: string };

// Commit only when every participant prepared, at the latest of their prepare times (so the commit
// is later than every snapshot any participant's prepared writes conflicted with); otherwise abort,
// naming the first refusal. The router answers an abort as MongoDB does, NoSuchTransaction.
export function decideFromVotes(votes: readonly PrepareVote[]): CoordinatorDecision {
  let commitTimestamp: Timestamp | undefined;
  for (const v of votes) {
    if (!('prepareTimestamp' in v)) return abortDecision(`participant ${v.shardId} refused to prepare (code ${v.code}): ${v.errmsg}`);
    if (commitTimestamp === undefined || commitTimestamp.lessThan(v.prepareTimestamp)) commitTimestamp = v.prepareTimestamp;
  }
  if (commitTimestamp === undefined) return abortDecision('a two-phase commit needs participants');
  return { decision: 'commit', commitTimestamp };
}

export function abortDecision(reason: string): CoordinatorDecision {
  return { decision: 'abort', abortStatus: { code: ErrorCodes.NoSuchTransaction, errmsg: `Transaction was aborted: ${reason}` } };
}

export function coordinatorDocumentToBSON(doc: CoordinatorDocument): Doc {
  const out: Doc = { _id: { lsid: doc.lsid, txnNumber: doc.txnNumber }, participants: doc.participants };
  if (doc.decision !== undefined) out.decision = doc.decision;
  return out;
}

export function coordinatorDocumentFromBSON(raw: Doc): CoordinatorDocument {
  const id = raw._id as Doc;
  const doc: CoordinatorDocument = { lsid: id.lsid as Doc, txnNumber: Number(id.txnNumber), participants: (raw.participants as unknown[]).map(String) };
  if (raw.decision !== undefined) doc.decision = raw.decision as CoordinatorDecision;
  return doc;
}

// Whether a participant's answer to commitTransaction or abortTransaction means it has the
// decision. As MongoDB's coordinator reads it, NoSuchTransaction and TransactionTooOld say so too:
// the participant applied the decision and moved on to a newer transaction (the earlier answer
// was lost), or never had the transaction to abort. Retrying those would never end. An ok with a
// writeConcernError does not: a primary deposed before its commit replicated answers so, and the
// decision must go again, to its successor.
export function decisionAcknowledged(reply: Doc): boolean {
  if (reply.ok === 1) return reply.writeConcernError === undefined;
  return reply.code === ErrorCodes.NoSuchTransaction || reply.code === ErrorCodes.TransactionTooOld;
}
