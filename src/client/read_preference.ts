import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';

// MongoDB's ReadPreferenceSetting: which members of a set may serve a request.
export type ReadPreferenceMode = 'primary' | 'primaryPreferred' | 'secondary' | 'secondaryPreferred' | 'nearest';

export interface ReadPreference {
  mode: ReadPreferenceMode;
  // Tried in order; the first that some eligible member matches wins. `{}` matches every member.
  tags?: Doc[];
  maxStalenessSeconds?: number;
}

export const PRIMARY_ONLY: ReadPreference = { mode: 'primary' };

// A member refreshes its lastWriteDate at least every idle write period (10 s), and the monitor
// hears of it at the latest a heartbeat later, so a bound below 90 s could exclude a healthy member.
export const SMALLEST_MAX_STALENESS_SECONDS = 90;

const MODES: ReadonlySet<string> = new Set(['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest']);

// A `$readPreference` document (or the mode alone, as a string) checked as mongos checks it.
export function parseReadPreference(value: unknown): ReadPreference {
  if (typeof value === 'string') return parseReadPreference({ mode: value });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MongoError(ErrorCodes.TypeMismatch, '$readPreference must be an object');
  }
  const doc = value as Doc;
  const mode = doc.mode;
  if (typeof mode !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, "$readPreference's mode must be a string");
  if (!MODES.has(mode)) throw new MongoError(ErrorCodes.FailedToParse, `Could not parse $readPreference mode '${mode}'`);
  const out: ReadPreference = { mode: mode as ReadPreferenceMode };
  if (doc.tags !== undefined) {
    if (!Array.isArray(doc.tags) || doc.tags.some((t) => typeof t !== 'object' || t === null || Array.isArray(t))) {
      throw new MongoError(ErrorCodes.TypeMismatch, "$readPreference's tags must be an array of documents");
    }
    const tags = doc.tags as Doc[];
    if (mode === 'primary' && tags.some((t) => Object.keys(t).length > 0)) {
      throw new MongoError(ErrorCodes.BadValue, 'Only empty tags are allowed with primary read preference');
    }
    if (mode !== 'primary') out.tags = tags;
  }
  const staleness = doc.maxStalenessSeconds;
  if (staleness !== undefined && Number(staleness) !== -1 && Number(staleness) !== 0) {
    const seconds = Number(staleness);
    if (!Number.isFinite(seconds) || seconds < 0) throw new MongoError(ErrorCodes.BadValue, 'maxStalenessSeconds must be a non-negative number');
    if (mode === 'primary') throw new MongoError(ErrorCodes.BadValue, "mode 'primary' does not allow for 'maxStalenessSeconds'");
    if (seconds < SMALLEST_MAX_STALENESS_SECONDS) {
      throw new MongoError(ErrorCodes.MaxStalenessOutOfRange, `maxStalenessSeconds must be at least ${SMALLEST_MAX_STALENESS_SECONDS} seconds`);
    }
    out.maxStalenessSeconds = seconds;
  }
  return out;
}

// The `$readPreference` a command sent to the chosen member carries, so that a secondary accepts a read.
export function readPreferenceDocument(rp: ReadPreference): Doc {
  return {
    mode: rp.mode,
    ...(rp.tags === undefined ? {} : { tags: rp.tags }),
    ...(rp.maxStalenessSeconds === undefined ? {} : { maxStalenessSeconds: rp.maxStalenessSeconds }),
  };
}
