import { ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { changeLogEntry } from '../catalog_decisions/changelog.js';
import { checkWriteConcern, fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import { START, type DDLPhaseEffect, type PhaseAt, type PhaseStepFn, type Request, type Target } from './ddl_phase_effects.js';
import { commandUnderSession, configHostOf, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

// The driver of a coordinator's phase step function (ddl_phase_effects.ts): persists what a step
// saves, then performs its effects one after another, and hands their answers to the next stage,
// until the step says the phase is done. A failed effect fails the phase (the run loop retries it
// or aborts); the service runs this under the coordinator's session.
export async function drivePhase(
  env: DDLCoordinatorEnv, step: PhaseStepFn, phase: string, doc: CoordinatorDocument, save: (fields: Doc) => void, self: () => string | undefined,
): Promise<void> {
  let at: PhaseAt = { phase, doc, stage: START, memo: {}, self: self() };
  let replies: (readonly Doc[])[] = [];
  for (;;) {
    const next = step(at, replies);
    let current = at.doc;
    if (next.save !== undefined) {
      save(next.save);
      current = { ...current, ...next.save };
    }
    replies = [];
    for (const effect of next.effects) replies.push(await perform(env, effect, self));
    if (next.next === undefined) return;
    at = { ...at, doc: current, stage: next.next, memo: { ...at.memo, ...next.memo }, self: self() };
  }
}

// For a coordinator's cleanupOnAbort, which has nothing to persist.
export function noSave(): never {
  throw new MongoError(ErrorCodes.InternalError, 'a DDL coordinator\'s clean-up persists nothing');
}

async function perform(env: DDLCoordinatorEnv, effect: DDLPhaseEffect, self: () => string | undefined): Promise<readonly Doc[]> {
  switch (effect.type) {
    case 'read':
      return fetchAll(env.client, hostOf(env, effect.to), effect.db, effect.cmd);
    case 'send':
      return Promise.all(effect.requests.map(async (r) => accepted(await commandUnderSession(env, hostOf(env, r.to), r.db, r.cmd), effect.accept)));
    case 'command':
      return [accepted(await env.client.command(hostOf(env, effect.request.to), effect.request.db, effect.request.cmd), effect.accept)];
    case 'hint':
      await Promise.all(effect.requests.map((r: Request) => env.client.command(hostOf(env, r.to), r.db, r.cmd).catch(() => undefined)));
      return [];
    case 'blockDatabaseWrites':
      env.primary.blockDatabaseWrites(effect.db, effect.reason);
      return [];
    case 'blockDatabase':
      env.primary.blockDatabase(effect.db, effect.reason);
      return [];
    case 'unblockDatabase':
      await env.primary.unblockDatabase(effect.db, effect.reason);
      return [];
    case 'logChange': {
      const entry = changeLogEntry({ server: effect.server, clientAddr: '', time: new Date(env.clock.now()), newId: () => new ObjectId() }, self() ?? '', effect.what, effect.ns, effect.details);
      await env.client.command(configHostOf(env), 'config', { insert: 'changelog', documents: [entry] }).catch(() => undefined);
      return [];
    }
  }
}

// An ok whose writeConcernError says the write may yet be undone (a config server or participant
// primary deposed before a majority held it) fails the effect, as MongoDB's coordinators read a
// reply's effective status: the phase runs again rather than going on from a write that is lost.
function accepted(reply: Doc, accept: readonly number[] | undefined): Doc {
  if (accept !== undefined && typeof reply.code === 'number' && accept.includes(reply.code)) return reply;
  return checkWriteConcern(reply);
}

function hostOf(env: DDLCoordinatorEnv, to: Target): string {
  return to === 'config' ? configHostOf(env) : to.host;
}

