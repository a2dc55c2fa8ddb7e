import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { bsonTypeName } from '../bson/compare.js';
import { isPlainObject, type Doc } from '../bson/values.js';

// The checks mongod makes of a $currentOp stage: admin and {aggregate: 1} only, its options a
// document of booleans. A node answers every option alike: it has no idle connections, cursors or
// sessions to add, and reports only its own operations.
const CURRENT_OP_OPTIONS = new Set(['allUsers', 'idleConnections', 'idleCursors', 'idleSessions', 'localOps', 'truncateOps', 'backtrace']);

export function checkCurrentOpStage(db: string, cmd: Doc, spec: unknown): void {
  if (db !== 'admin' || cmd.aggregate !== 1) {
    throw new MongoError(ErrorCodes.InvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}");
  }
  if (!isPlainObject(spec)) throw new MongoError(ErrorCodes.FailedToParse, `$currentOp options must be specified in an object, but found: ${bsonTypeName(spec)}`);
  for (const [k, v] of Object.entries(spec)) {
    if (!CURRENT_OP_OPTIONS.has(k)) throw new MongoError(ErrorCodes.FailedToParse, `Unrecognized option '${k}' in $currentOp stage.`);
    if (typeof v !== 'boolean') throw new MongoError(ErrorCodes.FailedToParse, `The '${k}' parameter of the $currentOp stage must be a boolean value, but found: ${bsonTypeName(v)}`);
  }
}

// The currentOp command's arguments that are options; every other field filters the operations.
export const CURRENT_OP_COMMAND_OPTIONS: ReadonlySet<string> = new Set(['currentOp', '$all', '$ownOps', '$truncateOps', 'comment', 'lsid', '$db', '$clusterTime', '$readPreference', 'apiVersion', 'apiStrict', 'apiDeprecationErrors']);
