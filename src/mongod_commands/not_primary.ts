import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { MongodServices } from './command.js';

// MongoDB's allowedOnSecondary, for the commands it matters to: writes run only on a writable
// primary (kNever); reads run on a secondary only when the client opted in (kOptIn) with a read
// preference other than primary. Everything else (hello, replSet*, diagnostics) runs anywhere.
const WRITES = new Set([
  'insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'create', 'drop', 'dropDatabase', 'createIndexes', 'dropIndexes',
  'deleteIndexes', 'collMod', 'renameCollection',
]);
const READS = new Set(['find', 'count', 'distinct', 'aggregate', 'listCollections', 'listIndexes', 'collStats', 'dbStats', 'dbstats', 'explain']);

function secondaryOk(cmd: Doc): boolean {
  const rp = cmd.$readPreference;
  return typeof rp === 'object' && rp !== null && typeof (rp as Doc).mode === 'string' && (rp as Doc).mode !== 'primary';
}

// On a --replSet member that is not a writable primary: a write answers NotWritablePrimary, a read
// without secondaryOk NotPrimaryNoSecondaryOk, and one with it NotPrimaryOrSecondary while the
// member holds nothing readable (STARTUP2, ROLLBACK, no config). The local database is the
// member's own and is never refused.
export function refuseUnlessPrimary(node: MongodServices, name: string, db: string, cmd: Doc): void {
  const repl = node.replication;
  if (repl === undefined || db === 'local' || repl.isWritablePrimary()) return;
  const topologyVersion = repl.topologyVersion();
  // A config server's catalog commands run on its primary only: addShard on a secondary would tell
  // the shard its identity and then fail to write config.shards.
  if (WRITES.has(name) || name.startsWith('_configsvr')) throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary', { topologyVersion });
  if (!READS.has(name)) return;
  if (!secondaryOk(cmd)) throw new MongoError(ErrorCodes.NotPrimaryNoSecondaryOk, 'not primary and secondaryOk=false', { topologyVersion });
  if (!repl.canServeReads()) throw new MongoError(ErrorCodes.NotPrimaryOrSecondary, 'node is not in primary or recovering state', { topologyVersion });
}
