import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';

// mapReduce's `out`, as MongoDB 7.0 reads it: {inline: 1} answers the results; a name, or
// {replace | merge | reduce: name[, db]}, writes them to a collection (replacing it, overwriting
// the keys it holds, or reducing each key's old and new values together).
export type MapReduceOut =
  | { kind: 'inline' }
  | { kind: 'replace' | 'merge' | 'reduce'; db: string; coll: string; dbGiven: boolean };

const MODES = ['replace', 'merge', 'reduce'] as const;

export function parseMapReduceOut(out: unknown, db: string): MapReduceOut {
  if (typeof out === 'string') return { kind: 'replace', db, coll: out, dbGiven: false };
  if (!isPlainObject(out)) throw new MongoError(13606, "'out' has to be a string or an object");
  if ('inline' in out) return { kind: 'inline' };
  const mode = MODES.find((m) => m in out);
  if (mode === undefined) throw new MongoError(13522, "please specify one of [replace, merge, reduce, inline] in 'out' object");
  const coll = out[mode];
  if (typeof coll !== 'string' || coll === '') throw new MongoError(ErrorCodes.BadValue, `'out.${mode}' must be a non-empty string`);
  if (out.sharded === true) throw new MongoError(ErrorCodes.InvalidOptions, "sharded field value must be false");
  const target = typeof out.db === 'string' ? out.db : db;
  return { kind: mode, db: target, coll, dbGiven: typeof out.db === 'string' };
}

// The reply of a run that wrote to a collection: its name, or its database and name when `out`
// named the database.
export function mapReduceOutReply(out: Exclude<MapReduceOut, { kind: 'inline' }>): Doc {
  return { result: out.dbGiven ? { db: out.db, collection: out.coll } : out.coll, ok: 1 };
}
