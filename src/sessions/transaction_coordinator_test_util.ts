import type { Timestamp } from 'bson';
import type { CoordinatorDecision, CoordinatorDocument, PrepareVote } from './transaction_coordinator.js';
import {
  coordinatorInitialState, type CoordinatorEffect, type CoordinatorEvent, type CoordinatorState, type CoordinatorStepFunction,
} from './transaction_coordinator_state_machine.js';

export type { CoordinatorStepFunction };

// What can be seen of a two-phase commit from outside its coordinator, in the order it happened:
// what the coordinator's disk holds after each of its writes (undefined once deleted), the
// messages it sends, what participants answer and apply, and its crashes. A model checker or a
// simulator records these; `checkTwoPhaseCommit` says what must never be seen.
export type TwoPhaseCommitObservation =
  | { readonly type: 'persisted'; readonly doc: CoordinatorDocument | undefined }
  | { readonly type: 'prepareSent'; readonly shardId: string }
  | { readonly type: 'voted'; readonly vote: PrepareVote }
  | { readonly type: 'decisionSent'; readonly shardId: string; readonly decision: CoordinatorDecision }
  | { readonly type: 'applied'; readonly shardId: string; readonly decision: CoordinatorDecision['decision'] }
  | { readonly type: 'crashed' };

// The safety of a two-phase commit, as violations (empty when none):
// - persist before act: prepare goes only to a participant of the document on disk, a decision
//   only once the disk holds that decision;
// - a decision once persisted never changes;
// - commit only if every participant voted to prepare, none refused, and at a time no earlier than
//   any participant's prepareTimestamp;
// - no participant applies commit while another applies abort, and none commits without having
//   prepared;
// - the document is deleted only once every participant applied the decision.
export function checkTwoPhaseCommit(history: readonly TwoPhaseCommitObservation[]): string[] {
  let seen = twoPhaseCommitCheckerInitial();
  const violations: string[] = [];
  history.forEach((o, at) => {
    const next = checkObservation(seen, o);
    seen = next.seen;
    violations.push(...next.violations.map((v) => `#${at} ${o.type}: ${v}`));
  });
  return violations;
}

// What the checker remembers of the history so far: enough to judge the next observation.
interface CheckerState {
  readonly disk: CoordinatorDocument | undefined;
  readonly decided: CoordinatorDecision | undefined;
  readonly prepared: ReadonlyMap<string, Timestamp>;
  readonly refused: ReadonlySet<string>;
  readonly applied: ReadonlyMap<string, CoordinatorDecision['decision']>;
}

function twoPhaseCommitCheckerInitial(): CheckerState {
  return { disk: undefined, decided: undefined, prepared: new Map(), refused: new Set(), applied: new Map() };
}

function checkObservation(seen: CheckerState, o: TwoPhaseCommitObservation): { seen: CheckerState; violations: string[] } {
  const violations: string[] = [];
  const fail = (what: string) => violations.push(what);
  let next = seen;
  switch (o.type) {
    case 'persisted': {
      const decision = o.doc?.decision;
      if (o.doc === undefined) {
        const missing = (seen.disk?.participants ?? []).filter((s) => !seen.applied.has(s));
        if (missing.length > 0) fail(`document deleted before ${missing.join(', ')} applied the decision`);
      } else if (decision !== undefined) {
        if (seen.decided !== undefined && !sameDecision(seen.decided, decision)) fail(`decision changed from ${describe(seen.decided)} to ${describe(decision)}`);
        next = { ...next, decided: decision };
        if (decision.decision === 'commit') {
          for (const shardId of o.doc.participants) {
            const ts = seen.prepared.get(shardId);
            if (seen.refused.has(shardId)) fail(`commit although ${shardId} refused to prepare`);
            else if (ts === undefined) fail(`commit although ${shardId} did not vote`);
            else if (decision.commitTimestamp.lessThan(ts)) fail(`commit at ${timeOf(decision.commitTimestamp)} before ${shardId}'s prepare at ${timeOf(ts)}`);
          }
        }
      }
      next = { ...next, disk: o.doc };
      break;
    }
    case 'prepareSent':
      if (seen.disk === undefined || !seen.disk.participants.includes(o.shardId)) fail(`prepare sent to ${o.shardId} before the participant list naming it was persisted`);
      break;
    case 'voted':
      if ('prepareTimestamp' in o.vote) next = { ...next, prepared: new Map(seen.prepared).set(o.vote.shardId, o.vote.prepareTimestamp) };
      else next = { ...next, refused: new Set(seen.refused).add(o.vote.shardId) };
      break;
    case 'decisionSent':
      if (seen.disk?.decision === undefined || !sameDecision(seen.disk.decision, o.decision)) fail(`${describe(o.decision)} sent to ${o.shardId} before it was persisted`);
      break;
    case 'applied': {
      const other = [...seen.applied].find(([, d]) => d !== o.decision);
      if (other !== undefined) fail(`${o.shardId} applied ${o.decision} while ${other[0]} applied ${other[1]}`);
      if (o.decision === 'commit' && !seen.prepared.has(o.shardId)) fail(`${o.shardId} committed without having prepared`);
      next = { ...next, applied: new Map(seen.applied).set(o.shardId, o.decision) };
      break;
    }
    case 'crashed':
      break;
  }
  return { seen: next, violations };
}

// Liveness at quiescence: the document is gone and every participant applied one decision.
function checkEnded(participants: readonly string[], seen: CheckerState): string[] {
  const violations: string[] = [];
  if (seen.disk !== undefined) violations.push('the coordinator document is still on disk');
  for (const shardId of participants) if (!seen.applied.has(shardId)) violations.push(`${shardId} never learnt the decision`);
  return violations;
}

function sameDecision(a: CoordinatorDecision, b: CoordinatorDecision): boolean {
  if (a.decision === 'commit' && b.decision === 'commit') return a.commitTimestamp.equals(b.commitTimestamp);
  return a.decision === b.decision;
}

function describe(d: CoordinatorDecision): string {
  return d.decision === 'commit' ? `commit at ${timeOf(d.commitTimestamp)}` : 'abort';
}

function timeOf(ts: Timestamp): string {
  return `Timestamp(${ts.t}, ${ts.i})`;
}

// Every interleaving of one coordinator with its participants, up to `maxCrashes` crashes of the
// coordinator, run through `step` and checked after every action. Participant i prepares at
// `prepareTimes[i]` or refuses (both are tried); messages in flight survive a crash (a participant
// may still act on one), their replies do not. A coordinator that restarts with its document
// recovers from it; one that restarts with nothing is started again (the router's retry). Returns
// the first violation found, with the actions that led to it, and how many distinct states it saw
// (a state reached twice, by different orders, is explored once).
export interface Exploration {
  readonly states: number;
  readonly violation: { readonly trace: string[]; readonly violations: string[] } | undefined;
}

type ParticipantState = { readonly kind: 'active' | 'refused' | 'committed' | 'aborted' } | { readonly kind: 'prepared'; readonly ts: Timestamp };

interface Message {
  readonly incarnation: number;
  readonly shardId: string;
  readonly what: { readonly kind: 'prepare' } | { readonly kind: 'decision'; readonly decision: CoordinatorDecision };
}

interface World {
  readonly incarnation: number;
  readonly crashes: number;
  readonly machine: CoordinatorState;
  readonly queue: readonly CoordinatorEffect[];
  readonly disk: CoordinatorDocument | undefined;
  readonly network: readonly Message[];
  readonly participants: ReadonlyMap<string, ParticipantState>;
  readonly seen: CheckerState;
  readonly violations: readonly string[];
  readonly trace: readonly string[];
}

export function exploreTwoPhaseCommit(step: CoordinatorStepFunction, options: { readonly participants: readonly string[]; readonly prepareTimes: readonly Timestamp[]; readonly maxCrashes: number }): Exploration {
  const doc: CoordinatorDocument = { lsid: { id: 'explored' }, txnNumber: 1, participants: [...options.participants] };
  const prepareTime = new Map(options.participants.map((s, i) => [s, options.prepareTimes[i]!]));
  const visited = new Set<string>();
  let found: Exploration['violation'];

  const feed = (w: World, event: CoordinatorEvent, label: string): World => {
    const next = step(w.machine, event);
    return { ...w, machine: next.state, queue: [...w.queue, ...next.effects], trace: [...w.trace, label] };
  };
  const observe = (w: World, ...observations: TwoPhaseCommitObservation[]): World => {
    let { seen } = w;
    const violations = [...w.violations];
    for (const o of observations) {
      const next = checkObservation(seen, o);
      seen = next.seen;
      violations.push(...next.violations.map((v) => `${o.type}: ${v}`));
    }
    return { ...w, seen, violations };
  };

  const successors = (w: World): World[] => {
    const out: World[] = [];
    const [effect, ...rest] = w.queue;
    if (effect !== undefined) out.push(runEffect({ ...w, queue: rest }, effect));
    w.network.forEach((m, i) => {
      const network = w.network.filter((_, j) => j !== i);
      for (const next of deliver({ ...w, network }, m)) out.push(next);
    });
    if (w.crashes < options.maxCrashes && w.machine.phase !== 'kDone') out.push(crash(w));
    return out;
  };

  const runEffect = (w: World, e: CoordinatorEffect): World => {
    switch (e.type) {
      case 'writeParticipantList':
        return feed(observe({ ...w, disk: e.doc }, { type: 'persisted', doc: e.doc }), { type: 'participantListPersisted' }, 'persist participants');
      case 'writeDecision':
        return feed(observe({ ...w, disk: e.doc }, { type: 'persisted', doc: e.doc }), { type: 'decisionPersisted' }, `persist ${e.doc.decision?.decision}`);
      case 'deleteCoordinatorDoc':
        return feed(observe({ ...w, disk: undefined }, { type: 'persisted', doc: undefined }), { type: 'coordinatorDocDeleted' }, 'delete document');
      case 'sendPrepare':
        return {
          ...observe(w, ...e.participants.map((shardId) => ({ type: 'prepareSent' as const, shardId }))),
          network: [...w.network, ...e.participants.map((shardId) => ({ incarnation: w.incarnation, shardId, what: { kind: 'prepare' as const } }))],
          trace: [...w.trace, 'send prepare'],
        };
      case 'sendDecision':
        return {
          ...observe(w, ...e.participants.map((shardId) => ({ type: 'decisionSent' as const, shardId, decision: e.decision }))),
          network: [...w.network, ...e.participants.map((shardId) => ({ incarnation: w.incarnation, shardId, what: { kind: 'decision' as const, decision: e.decision } }))],
          trace: [...w.trace, `send ${e.decision.decision}`],
        };
    }
  };

  const deliver = (w: World, m: Message): World[] => {
    const current = m.incarnation === w.incarnation;
    const p = w.participants.get(m.shardId)!;
    const withParticipant = (state: ParticipantState) => new Map(w.participants).set(m.shardId, state);
    if (m.what.kind === 'prepare') {
      const choices: ParticipantState[] = p.kind === 'active' ? [{ kind: 'prepared', ts: prepareTime.get(m.shardId)! }, { kind: 'refused' }] : [p];
      return choices.map((state) => {
        const vote: PrepareVote = state.kind === 'prepared' ? { shardId: m.shardId, prepareTimestamp: state.ts } : { shardId: m.shardId, code: 251, errmsg: 'refused' };
        const label = `${m.shardId} votes ${'prepareTimestamp' in vote ? 'prepared' : 'refused'}${current ? '' : ' (to a dead coordinator)'}`;
        const voted = observe({ ...w, participants: withParticipant(state) }, { type: 'voted', vote });
        return current ? feed(voted, { type: 'voteReceived', vote }, label) : { ...voted, trace: [...voted.trace, label] };
      });
    }
    const { decision } = m.what;
    const applied = observe({ ...w, participants: withParticipant({ kind: decision.decision === 'commit' ? 'committed' : 'aborted' }) }, { type: 'applied', shardId: m.shardId, decision: decision.decision });
    const label = `${m.shardId} applies ${decision.decision}${current ? '' : ' (from a dead coordinator)'}`;
    return [current ? feed(applied, { type: 'decisionAcknowledged', shardId: m.shardId }, label) : { ...applied, trace: [...applied.trace, label] }];
  };

  const crash = (w: World): World => {
    const restarted: World = observe({ ...w, incarnation: w.incarnation + 1, crashes: w.crashes + 1, machine: coordinatorInitialState(), queue: [] }, { type: 'crashed' });
    if (w.disk !== undefined) return feed(restarted, { type: 'crashRecovered', doc: w.disk }, 'crash, recover from disk');
    return feed(restarted, { type: 'start', doc }, 'crash, started again by the router');
  };

  const visit = (w: World): void => {
    if (found !== undefined) return;
    if (w.violations.length > 0) {
      found = { trace: [...w.trace], violations: [...w.violations] };
      return;
    }
    const key = keyOf(w);
    if (visited.has(key)) return;
    visited.add(key);
    const next = successors(w);
    if (next.every((n) => n.crashes > w.crashes)) {
      const ended = checkEnded(options.participants, w.seen);
      if (ended.length > 0) found = { trace: [...w.trace], violations: ended };
    }
    for (const n of next) visit(n);
  };

  const initial: World = {
    incarnation: 0, crashes: 0, machine: coordinatorInitialState(), queue: [], disk: undefined, network: [],
    participants: new Map(options.participants.map((s) => [s, { kind: 'active' }])), seen: twoPhaseCommitCheckerInitial(), violations: [], trace: [],
  };
  visit(feed(initial, { type: 'start', doc }, 'start'));
  return { states: visited.size, violation: found };
}

// Everything that decides a world's future and what the checker will say of it, but not how it
// was reached: message incarnations only as whether their replies still reach the coordinator.
function keyOf(w: World): string {
  const network = w.network.map((m) => JSON.stringify([m.incarnation === w.incarnation, m.shardId, m.what])).sort();
  const { seen } = w;
  return JSON.stringify([
    w.crashes, w.machine, w.queue, w.disk, network, [...w.participants],
    [seen.disk, seen.decided, [...seen.prepared].sort(), [...seen.refused].sort(), [...seen.applied].sort()],
  ]);
}
