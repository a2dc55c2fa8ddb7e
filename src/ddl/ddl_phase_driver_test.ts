import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ManualClock } from '../base/manual_clock_test_util.js';
import type { Doc } from '../bson/values.js';
import type { Network } from '../wire/network.js';
import { drivePhase } from './ddl_phase_driver.js';
import { START, type PhaseStepFn } from './ddl_phase_effects.js';
import { coordinatorDoc } from './ddl_phase_test_util.js';
import type { DDLCoordinatorEnv } from './sharding_ddl_util.js';

// One phase that sends a commit to the config server, answered by `reply`: what the driver makes
// of the answer.
function driveCommit(reply: Doc): Promise<void> {
  const network: Network = {
    command: () => Promise.resolve(reply),
    commandRaw: () => Promise.reject(new Error('not used')),
    forwardMessage: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
  };
  const env: DDLCoordinatorEnv = {
    client: network,
    configHost: () => 'cfg/c0:1,c1:1,c2:1',
    clock: new ManualClock(),
    primary: { blockDatabaseWrites: () => undefined, blockDatabase: () => undefined, unblockDatabase: () => Promise.resolve() },
  };
  const step: PhaseStepFn = (at) => (at.stage === START
    ? { effects: [{ type: 'send', requests: [{ to: 'config', db: 'admin', cmd: { _configsvrCommitDropCollection: 'test.c' } }] }], next: 'done' }
    : { effects: [] });
  return drivePhase(env, step, 'kDropCollection', coordinatorDoc('dropCollection', 'test.c', { _shardsvrDropCollection: 'c' }), () => undefined, () => undefined);
}

test('a commit the config server answered ok goes on; one answered with a writeConcernError fails the phase, which runs again', async () => {
  await driveCommit({ ok: 1 });
  const deposed = { ok: 1, writeConcernError: { code: ErrorCodes.PrimarySteppedDown, codeName: 'PrimarySteppedDown', errmsg: 'Primary stepped down while waiting for replication' } };
  await assert.rejects(driveCommit(deposed), (err: MongoError) => err.code === ErrorCodes.PrimarySteppedDown);
  await assert.rejects(driveCommit({ ok: 0, code: ErrorCodes.ConflictingOperationInProgress, errmsg: 'busy' }), (err: MongoError) => err.code === ErrorCodes.ConflictingOperationInProgress);
});
