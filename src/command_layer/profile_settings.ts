import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { SlowOperationSettings } from '../metrics/slow_operations.js';
import { optionalNumber } from './args.js';

// {profile: level, slowms, sampleRate}, as MongoDB answers it: the settings as they were (`was`,
// the level, always 0 here; `slowms`; `sampleRate`), then the new ones applied. Level -1 only
// reads, 0 sets what the slow operation log uses. Levels 1 and 2 turn on MongoDB's database
// profiler (system.profile), which a node does not have (NotImplemented) and a router never has
// (BadValue, as mongos).
export function runProfile(settings: SlowOperationSettings, cmd: Doc, on: 'node' | 'router', log: (from: Doc, to: Doc) => void): Doc {
  const level = optionalNumber(cmd, 'profile');
  if (level === undefined || !Number.isInteger(level) || level < -1 || level > 2) throw new MongoError(ErrorCodes.BadValue, 'profile takes -1, 0, 1 or 2');
  const slowms = optionalNumber(cmd, 'slowms');
  const sampleRate = optionalNumber(cmd, 'sampleRate');
  if (sampleRate !== undefined && !(sampleRate >= 0 && sampleRate <= 1)) throw new MongoError(ErrorCodes.BadValue, "'sampleRate' must be between 0.0 and 1.0 inclusive");
  if (cmd.filter !== undefined) throw new MongoError(ErrorCodes.NotImplemented, "profile's filter is not implemented by docshard");
  if (level > 0) {
    if (on === 'router') {
      throw new MongoError(ErrorCodes.BadValue, 'Profiling is not permitted on a router: profile takes 0 to set slowms and sampleRate for the log, or -1 to read them');
    }
    throw new MongoError(ErrorCodes.NotImplemented, 'the database profiler (profile levels 1 and 2, system.profile) is not implemented by docshard: profile takes 0 to set slowms and sampleRate for the log, or -1 to read them');
  }
  const was = { level: 0, slowms: settings.slowms, sampleRate: settings.sampleRate };
  if (slowms !== undefined) settings.slowms = Math.trunc(slowms);
  if (sampleRate !== undefined) settings.sampleRate = sampleRate;
  if (level !== -1 || slowms !== undefined || sampleRate !== undefined) log(was, { level: 0, slowms: settings.slowms, sampleRate: settings.sampleRate });
  return { was: was.level, slowms: was.slowms, sampleRate: was.sampleRate, ok: 1 };
}
