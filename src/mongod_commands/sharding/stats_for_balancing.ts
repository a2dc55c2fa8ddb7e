import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject } from '../../bson/values.js';
import { orphansOf } from '../../migration/range_orphans.js';
import type { CommandContext, CommandDefinition } from '../command.js';
import { requireArray } from '../../command_layer/args.js';

// _shardsvrGetStatsForBalancing {collections: [{ns, UUID}]}: each collection's data size on this
// shard, counting only what the shard owns. MongoDB subtracts an orphan-document estimate; the
// range deletion tasks here keep the orphans' exact size (range_orphans.ts), so a donor whose
// range deletion is slow does not look heavier than it is.
export const getStatsForBalancingCommand: CommandDefinition = {
  names: ['_shardsvrGetStatsForBalancing'],
  adminOnly: true,
  run(ctx, cmd) {
    const stats = requireArray(cmd, 'collections').map((entry) => {
      if (!isPlainObject(entry) || typeof entry.ns !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, 'collections must be [{ns, UUID}]');
      return { namespace: entry.ns, collSize: ownedBytes(ctx, entry.ns) };
    });
    return { stats, ok: 1 };
  },
};

function ownedBytes(ctx: CommandContext, ns: string): number {
  const { storage, local } = ctx.node;
  const coll = storage.getCollection(ns);
  if (!coll) return 0;
  return Math.max(0, storage.stats.get(coll.entry.id).size - orphansOf(local, ns).bytes);
}
