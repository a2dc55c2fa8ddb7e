import { ObjectId } from 'bson';
import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import type { DatabaseType } from '../catalog/type_chunk.js';
import { changeLogEntry, CONFIG_SHARD } from '../catalog_decisions/changelog.js';
import { commitMovePrimary, type MovePrimaryCommit } from '../catalog_decisions/move_primary.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Clock } from '../base/clock.js';

// The config server's part of movePrimary (MongoDB's _configsvrCommitMovePrimary), asked by the
// MovePrimaryCoordinator on the donor (src/ddl/move_primary_coordinator.ts) once the recipient
// holds the copies: config.databases names the recipient with lastMod + 1, in one write unit with
// its changelog entry. The check and the write run in one turn of the event loop, so nothing else
// changes the entry between them.
export function commitMovePrimaryOnCatalog(local: LocalCollections, selfHost: string, logger: Logger, clock: Clock, commit: MovePrimaryCommit): void {
  const { db, from, to } = commit;
  const current = local.findOne('config.databases', { _id: db }) as unknown as DatabaseType | undefined;
  const committed = commitMovePrimary(current, commit);
  if (committed === undefined) return;
  local.write((w) => {
    w.update('config.databases', { _id: db }, committed as unknown as Doc);
    w.insert('config.changelog', changeLogEntry({ server: selfHost, clientAddr: '', time: new Date(clock.now()), newId: () => new ObjectId() }, CONFIG_SHARD, 'movePrimary.commit', db, { from, to }));
  });
  logger.info({ c: 'SHARDING', db, from, to, version: committed.version }, 'movePrimary committed');
}
