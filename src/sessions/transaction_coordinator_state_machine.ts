import { assert } from '../base/errors.js';
import { abortDecision, decideFromVotes, type CoordinatorDecision, type CoordinatorDocument, type PrepareVote } from './transaction_coordinator.js';

// The two-phase commit coordinator (transaction_coordinator.ts) as a pure state machine:
// `coordinatorStep(state, event)` returns the next state and the effects its driver
// (transaction_coordinator_service.ts) runs, one after another, in order:
//
//   kCreated ─start─▶ kWritingParticipantList ─persisted─▶ kWaitingForVotes ─every vote─▶
//   kWritingDecision ─persisted─▶ kWaitingForDecisionAcks ─every ack─▶ kDeletingCoordinatorDoc
//   ─deleted─▶ kDone
//
// A restarted coordinator begins in kCreated and gets `crashRecovered` with its document: without
// a decision it persists abort (a participant may have lost its transaction in the same crash),
// with one it delivers that decision again.
export type CoordinatorPhase =
  | 'kCreated'
  | 'kWritingParticipantList'
  | 'kWaitingForVotes'
  | 'kWritingDecision'
  | 'kWaitingForDecisionAcks'
  | 'kDeletingCoordinatorDoc'
  | 'kDone';

export interface CoordinatorState {
  readonly phase: CoordinatorPhase;
  // The document as this run last wrote or found it, with its decision once decided; absent only
  // in kCreated.
  readonly doc: CoordinatorDocument | undefined;
  // One slot per entry of doc.participants (a shard named twice is asked twice, as before).
  readonly votes: readonly (PrepareVote | undefined)[];
  readonly acknowledged: readonly boolean[];
}

// The real coordinatorStep, or one with a bug planted (an explorer's, a simulator's testing knob).
export type CoordinatorStepFunction = (state: CoordinatorState, event: CoordinatorEvent) => CoordinatorStepResult;

export type CoordinatorEvent =
  | { readonly type: 'start'; readonly doc: CoordinatorDocument }
  | { readonly type: 'crashRecovered'; readonly doc: CoordinatorDocument }
  | { readonly type: 'participantListPersisted' }
  | { readonly type: 'voteReceived'; readonly vote: PrepareVote }
  | { readonly type: 'decisionPersisted' }
  | { readonly type: 'decisionAcknowledged'; readonly shardId: string }
  | { readonly type: 'coordinatorDocDeleted' };

// What the driver does, by class:
//   persist  writeParticipantList, writeDecision (upserts of `doc`), deleteCoordinatorDoc: durable
//            before the next effect starts; answered by the matching `…Persisted`/`…Deleted` event.
//   request  sendPrepare: prepareTransaction to each participant, complete once sent; each answer
//            (or, after 30 s of failures, a refusal) comes back as a `voteReceived`.
//   command  sendDecision: commitTransaction or abortTransaction to each participant, retried until
//            it answers; each answer comes back as a `decisionAcknowledged`.
// Persist before act follows from the order: prepare is sent only after the participant list is
// durable, and a decision only after it is durable.
export type CoordinatorEffect =
  | { readonly type: 'writeParticipantList'; readonly doc: CoordinatorDocument }
  | { readonly type: 'sendPrepare'; readonly participants: readonly string[] }
  | { readonly type: 'writeDecision'; readonly doc: CoordinatorDocument }
  | { readonly type: 'sendDecision'; readonly participants: readonly string[]; readonly decision: CoordinatorDecision }
  | { readonly type: 'deleteCoordinatorDoc' };

export interface CoordinatorStepResult {
  readonly state: CoordinatorState;
  readonly effects: CoordinatorEffect[];
}

export function coordinatorInitialState(): CoordinatorState {
  return { phase: 'kCreated', doc: undefined, votes: [], acknowledged: [] };
}

// The decision, once the run is done.
export function coordinatorOutcome(state: CoordinatorState): CoordinatorDecision | undefined {
  return state.phase === 'kDone' ? state.doc?.decision : undefined;
}

// An event the phase does not expect changes nothing: a vote or an answer that arrives twice or
// late is normal.
export function coordinatorStep(state: CoordinatorState, event: CoordinatorEvent): CoordinatorStepResult {
  switch (state.phase) {
    case 'kCreated':
      return stepCreated(state, event);
    case 'kWritingParticipantList':
      return event.type === 'participantListPersisted' ? askForVotes(state) : unchanged(state);
    case 'kWaitingForVotes':
      return event.type === 'voteReceived' ? countVote(state, event.vote) : unchanged(state);
    case 'kWritingDecision':
      return event.type === 'decisionPersisted' ? deliverDecision(state) : unchanged(state);
    case 'kWaitingForDecisionAcks':
      return event.type === 'decisionAcknowledged' ? countAcknowledgement(state, event.shardId) : unchanged(state);
    case 'kDeletingCoordinatorDoc':
      return event.type === 'coordinatorDocDeleted' ? to({ ...state, phase: 'kDone' }, []) : unchanged(state);
    case 'kDone':
      return unchanged(state);
  }
}

function stepCreated(state: CoordinatorState, event: CoordinatorEvent): CoordinatorStepResult {
  switch (event.type) {
    case 'start': {
      assert(event.doc.decision === undefined, 'a two-phase commit starts without a decision');
      return to({ ...state, phase: 'kWritingParticipantList', doc: event.doc }, [{ type: 'writeParticipantList', doc: event.doc }]);
    }
    case 'crashRecovered': {
      const recovered = { ...state, doc: event.doc };
      if (event.doc.decision === undefined) return decide(recovered, abortDecision('the transaction coordinator restarted before it reached a decision'));
      return deliverDecision(recovered);
    }
    default:
      return unchanged(state);
  }
}

function askForVotes(state: CoordinatorState): CoordinatorStepResult {
  const { participants } = docOf(state);
  const asked = to({ ...state, phase: 'kWaitingForVotes', votes: participants.map(() => undefined) }, [{ type: 'sendPrepare', participants }]);
  return participants.length === 0 ? then(asked, decide(asked.state, decideFromVotes([]))) : asked;
}

function countVote(state: CoordinatorState, vote: PrepareVote): CoordinatorStepResult {
  const { participants } = docOf(state);
  const slot = participants.findIndex((shardId, i) => shardId === vote.shardId && state.votes[i] === undefined);
  if (slot < 0) return unchanged(state);
  const votes = state.votes.map((v, i) => (i === slot ? vote : v));
  const next = { ...state, votes };
  // Every vote is awaited, so that an abort names the first participant (in the router's order)
  // that refused, whatever order the answers came in.
  if (votes.some((v) => v === undefined)) return to(next, []);
  return decide(next, decideFromVotes(votes as PrepareVote[]));
}

function decide(state: CoordinatorState, decision: CoordinatorDecision): CoordinatorStepResult {
  const doc = { ...docOf(state), decision };
  return to({ ...state, phase: 'kWritingDecision', doc }, [{ type: 'writeDecision', doc }]);
}

function deliverDecision(state: CoordinatorState): CoordinatorStepResult {
  const doc = docOf(state);
  assert(doc.decision !== undefined, 'a decision is delivered once persisted');
  const asked = to({ ...state, phase: 'kWaitingForDecisionAcks', acknowledged: doc.participants.map(() => false) }, [
    { type: 'sendDecision', participants: doc.participants, decision: doc.decision },
  ]);
  return doc.participants.length === 0 ? then(asked, forget(asked.state)) : asked;
}

function countAcknowledgement(state: CoordinatorState, shardId: string): CoordinatorStepResult {
  const { participants } = docOf(state);
  const slot = participants.findIndex((s, i) => s === shardId && !state.acknowledged[i]);
  if (slot < 0) return unchanged(state);
  const acknowledged = state.acknowledged.map((a, i) => a || i === slot);
  const next = { ...state, acknowledged };
  return acknowledged.every((a) => a) ? forget(next) : to(next, []);
}

function forget(state: CoordinatorState): CoordinatorStepResult {
  return to({ ...state, phase: 'kDeletingCoordinatorDoc' }, [{ type: 'deleteCoordinatorDoc' }]);
}

function docOf(state: CoordinatorState): CoordinatorDocument {
  assert(state.doc !== undefined, `the coordinator has its document in ${state.phase}`);
  return state.doc;
}

function then(first: CoordinatorStepResult, second: CoordinatorStepResult): CoordinatorStepResult {
  return { state: second.state, effects: [...first.effects, ...second.effects] };
}

function to(state: CoordinatorState, effects: CoordinatorEffect[]): CoordinatorStepResult {
  return { state, effects };
}

function unchanged(state: CoordinatorState): CoordinatorStepResult {
  return { state, effects: [] };
}
