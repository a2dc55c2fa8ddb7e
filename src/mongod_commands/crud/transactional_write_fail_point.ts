import { MongoError } from '../../base/errors.js';
import type { RetryableWriteRun } from '../../sessions/session_catalog.js';
import type { CommandContext } from '../command.js';
import { ON_PRIMARY_TRANSACTIONAL_WRITE, transactionalWriteEffect } from '../../command_layer/fail_command_policy.js';

// MongoDB's onPrimaryTransactionalWrite fail point on a retryable write's run: it fires in the
// write unit, once the statements that run now have written and before they are recorded, so
// that closing the connection loses the reply of a write that commits, and failing the unit
// commits nothing. MongoDB fires it once per insert command and once per statement of an update
// or delete; docshard commits all the statements of a command in one unit, and fires it once
// per command.
export function withTransactionalWriteFailPoint(ctx: CommandContext, run: RetryableWriteRun): RetryableWriteRun {
  run.beforeRecording = () => {
    const data = ctx.node.failPoints.shouldFire(ON_PRIMARY_TRANSACTIONAL_WRITE);
    if (data === undefined) return;
    const effect = transactionalWriteEffect(data);
    if (effect.closeConnection) ctx.conn.close?.();
    if (effect.failBeforeCommitCode !== undefined) {
      throw new MongoError(effect.failBeforeCommitCode, 'Failing write due to failpoint. The write must not be reflected.');
    }
  };
  return run;
}
