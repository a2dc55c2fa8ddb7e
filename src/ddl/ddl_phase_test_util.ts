import assert from 'node:assert/strict';
import { deserialize, Long, serialize, UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument, DDLOperationType } from './sharding_ddl_coordinator_document.js';
import { CLEANUP_ON_ABORT, START, type DDLPhaseEffect, type PhaseStepFn } from './ddl_phase_effects.js';

// What the cluster answers an effect with in a test: documents, or an error the effect fails with.
export type Answer = (effect: DDLPhaseEffect) => readonly Doc[];

export interface PhaseRun {
  readonly effects: DDLPhaseEffect[];
  readonly saves: Doc[];
  // Effects and saves in the order the driver runs them: `save <fields>` before the effects of its step.
  readonly trace: string[];
  // The state document after the phase, with what it saved.
  readonly doc: CoordinatorDocument;
}

export function coordinatorDoc(operationType: DDLOperationType, namespace: string, request: Doc, fields: Doc = {}): CoordinatorDocument {
  return { _id: { namespace, operationType }, phase: 'kUnset', request, session: { lsid: { id: new UUID() }, txnNumber: Long.ZERO }, ...fields };
}

// One phase from its first stage to its end, as ddl_phase_driver.ts drives it, against `answer`
// (the clean-up keeps the document's phase: the one that aborted).
export function runPhase(step: PhaseStepFn, phase: string, doc: CoordinatorDocument, answer: Answer, self?: string): PhaseRun {
  const effects: DDLPhaseEffect[] = [];
  const saves: Doc[] = [];
  const trace: string[] = [];
  let at = { phase, doc: phase === CLEANUP_ON_ABORT ? doc : { ...doc, phase }, stage: START, memo: {}, self };
  let replies: (readonly Doc[])[] = [];
  for (let guard = 0; guard < 1000; guard++) {
    const next = step(at, replies);
    let current = at.doc;
    if (next.save !== undefined) {
      saves.push(next.save);
      trace.push(`save ${Object.keys(next.save).join(',')}`);
      current = { ...current, ...next.save };
    }
    effects.push(...next.effects);
    trace.push(...next.effects.map(describeEffect));
    replies = next.effects.map(answer);
    if (next.next === undefined) return { effects, saves, trace, doc: current };
    at = { ...at, doc: current, stage: next.next, memo: { ...at.memo, ...next.memo } };
  }
  throw new Error(`${phase} never ended`);
}

// Every phase in order, each from the document the one before left; returns each phase's run.
export function runPhases(step: PhaseStepFn, phases: readonly string[], doc: CoordinatorDocument, answer: Answer, self?: string): Map<string, PhaseRun> {
  const runs = new Map<string, PhaseRun>();
  let current = doc;
  for (const phase of phases) {
    const run = runPhase(step, phase, current, answer, self);
    runs.set(phase, run);
    current = run.doc;
  }
  return runs;
}

// A coordinator that crashed in any phase runs it again from its persisted document alone, as
// stored (through BSON, so nothing kept only in memory survives): from the phase's checkpoint the
// step decides the same effects and saves as the first time, and after what the phase saved the
// same effects, but in the phases `decidedBySave` names (one whose saved note tells it its work is
// done).
export function assertResumesFromEachPhase(
  step: PhaseStepFn, phases: readonly string[], doc: CoordinatorDocument, answer: Answer, self?: string, decidedBySave: readonly string[] = [],
): void {
  let persisted = doc;
  for (const phase of phases) {
    const first = runPhase(step, phase, persisted, answer, self);
    const fromCheckpoint = runPhase(step, phase, stored({ ...persisted, phase }), answer, self);
    assert.deepEqual(fromCheckpoint.effects, first.effects, `${phase} run again from its checkpoint decides other effects`);
    assert.deepEqual(fromCheckpoint.saves, first.saves.map((s) => deserialize(serialize(s))), `${phase} run again from its checkpoint saves otherwise`);
    if (!decidedBySave.includes(phase)) {
      const afterSaves = runPhase(step, phase, stored(first.doc), answer, self);
      assert.deepEqual(afterSaves.effects, first.effects, `${phase} run again after its saves decides other effects`);
    }
    persisted = first.doc;
  }
}

function stored(doc: CoordinatorDocument): CoordinatorDocument {
  return deserialize(serialize(doc)) as CoordinatorDocument;
}

// An effect in a line, for tests that read a phase's order: `send config _configsvrCommitDropCollection`.
export function describeEffect(effect: DDLPhaseEffect): string {
  const target = (to: 'config' | { host: string }): string => (to === 'config' ? 'config' : to.host);
  const verb = (cmd: Doc): string => Object.keys(cmd)[0]!;
  switch (effect.type) {
    case 'read':
      return `read ${target(effect.to)} ${verb(effect.cmd)} ${String(Object.values(effect.cmd)[0])}`;
    case 'send':
      return `send ${effect.requests.map((r) => target(r.to)).join(',')} ${verb(effect.requests[0]?.cmd ?? {})}`;
    case 'command':
      return `command ${target(effect.request.to)} ${verb(effect.request.cmd)}`;
    case 'hint':
      return `hint ${effect.requests.map((r) => target(r.to)).join(',')} ${verb(effect.requests[0]?.cmd ?? {})}`;
    case 'logChange':
      return `logChange ${effect.what}`;
    default:
      return `${effect.type} ${effect.db}`;
  }
}

// The commands an effect sends, one per request.
export function commandsOf(effect: DDLPhaseEffect | undefined): Doc[] {
  if (effect === undefined) return [];
  if (effect.type === 'send' || effect.type === 'hint') return effect.requests.map((r) => r.cmd);
  if (effect.type === 'command' || effect.type === 'read') return [effect.type === 'command' ? effect.request.cmd : effect.cmd];
  return [];
}
