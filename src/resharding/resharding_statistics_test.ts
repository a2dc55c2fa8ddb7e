import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCodes } from '../base/error_codes.js';
import { ReshardingStatistics } from './resharding_statistics.js';

test('each provenance counts in its own section: committed, canceled by its abort, failed; a step-down ends nothing', () => {
  const stats = new ReshardingStatistics();
  const zero = { countStarted: 0, countSucceeded: 0, countFailed: 0, countCanceled: 0 };
  assert.deepEqual(stats.serverStatus(), { resharding: zero, moveCollection: zero, unshardCollection: zero });
  for (let i = 0; i < 4; i++) stats.started('moveCollection');
  stats.ended('moveCollection', undefined);
  stats.ended('moveCollection', { code: ErrorCodes.ReshardCollectionAborted, errmsg: 'aborted' });
  stats.ended('moveCollection', { code: ErrorCodes.ReshardingCriticalSectionTimeout, errmsg: 'timed out' });
  stats.ended('moveCollection', { code: ErrorCodes.InterruptedDueToReplStateChange, errmsg: 'stepped down' });
  stats.started('unshardCollection');
  stats.ended('unshardCollection', undefined);
  stats.started('reshardCollection');
  assert.deepEqual(stats.serverStatus(), {
    resharding: { ...zero, countStarted: 1 },
    moveCollection: { countStarted: 4, countSucceeded: 1, countFailed: 1, countCanceled: 1 },
    unshardCollection: { ...zero, countStarted: 1, countSucceeded: 1 },
  });
});
