import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// MongoDB's defaults: stand down for 60 s, wait up to 10 s for a secondary to catch up.
const STEP_DOWN_SECS_DEFAULT = 60;
const CATCH_UP_SECS_DEFAULT = 10;

function seconds(v: unknown, fallback: number, field: string): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || typeof v === 'boolean' || typeof v === 'string') throw new MongoError(ErrorCodes.TypeMismatch, `${field} must be a number`);
  return n;
}

export const replSetStepDownCommand: CommandDefinition = {
  names: ['replSetStepDown'],
  adminOnly: true,
  run: async (ctx, cmd) => {
    const stepDownSecs = seconds(cmd.replSetStepDown, STEP_DOWN_SECS_DEFAULT, 'stepDownSecs');
    const catchUpSecs = seconds(cmd.secondaryCatchUpPeriodSecs, CATCH_UP_SECS_DEFAULT, 'secondaryCatchUpPeriodSecs');
    if (catchUpSecs > stepDownSecs) throw new MongoError(ErrorCodes.BadValue, 'stepdown period must be longer than secondaryCatchUpPeriodSecs');
    await replicationOf(ctx.node).stepDown(stepDownSecs, catchUpSecs, cmd.force === true);
    return { ok: 1 };
  },
};
