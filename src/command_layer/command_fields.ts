import { isPlainObject, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { CLIENT_ALIASES, CLIENT_COMMAND_FIELDS, OPEN_COMMANDS } from './client_command_fields.js';
import { INTERNAL_COMMAND_FIELDS } from './internal_command_fields.js';

// The fields each command accepts, as MongoDB's IDL parses them (a strict command refuses any
// other with 40415). One table for nodes and routers, checked by both dispatchers, so the two
// cannot drift: the commands clients send (client_command_fields.ts) and those docshard's
// processes send each other (internal_command_fields.ts). Every command has its fields listed,
// those MongoDB parses by hand too, so that none accepts and ignores a misspelt option; only the
// few whose fields are names of things (OPEN_COMMANDS) take any.

// Accepted by every command (src/mongo/idl/generic_argument.idl and generic_args_with_types.idl:
// API version 1, then the unstable ones, which routers and shards send each other).
const GENERIC_ARGUMENTS: ReadonlySet<string> = new Set([
  'apiVersion', 'apiStrict', 'apiDeprecationErrors', '$db', 'maxTimeMS', 'readConcern', 'writeConcern', 'lsid',
  'clientOperationKey', 'txnNumber', 'autocommit', 'startTransaction', 'stmtId', 'comment', '$readPreference', '$clusterTime',
  '$audit', '$client', '$configServerState', 'allowImplicitCollectionCreation', '$oplogQueryData', '$queryOptions', '$replData',
  'databaseVersion', 'shardVersion', 'tracking_info', 'coordinator', 'maxTimeMSOpOnly', '$configTime', '$topologyTime',
  'txnRetryCounter', 'mayBypassWriteBlocking', '$tenant', 'expectPrefix', 'placementConflictTime',
]);

// A command without `fields` takes any.
const BY_NAME = new Map<string, { name: string; fields?: ReadonlySet<string> }>();
for (const [name, fields] of Object.entries({ ...CLIENT_COMMAND_FIELDS, ...INTERNAL_COMMAND_FIELDS })) BY_NAME.set(name, { name, fields: new Set(fields) });
for (const name of Object.keys(OPEN_COMMANDS)) BY_NAME.set(name, { name });
for (const [alias, name] of Object.entries(CLIENT_ALIASES)) BY_NAME.set(alias, BY_NAME.get(name)!);

// Refuses a field the command `name` (its first field) does not know, as MongoDB's IDL parser
// does: 40415 "BSON field 'find.bogus' is an unknown field.". The command explain runs is checked
// in turn, as MongoDB parses it with its own command's IDL. A command the table misses is not
// checked (command_fields_test.ts allows none).
export function checkCommandFields(name: string, cmd: Doc): void {
  const known = BY_NAME.get(name);
  if (known?.fields === undefined) return;
  for (const field in cmd) {
    if (field !== name && !known.fields.has(field) && !GENERIC_ARGUMENTS.has(field)) {
      throw new MongoError(40415, `BSON field '${known.name}.${field}' is an unknown field.`);
    }
  }
  if (name === 'explain' && isPlainObject(cmd.explain)) {
    const inner = Object.keys(cmd.explain)[0];
    if (inner !== undefined) checkCommandFields(inner, cmd.explain);
  }
}
