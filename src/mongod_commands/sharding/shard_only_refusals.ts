import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandDefinition, ShardServices } from '../command.js';
import { checkDDLCoordinatorSession } from './ddl_participant_session.js';

export function shardOnlyMessage(name: string): string {
  return `${name} can only be run on a shard that belongs to a cluster`;
}

// What a config server answers to a command only a shard runs (its DDL coordinators' and
// participants' commands, registered only in a shard's table): refused as a shard outside a
// cluster refuses it, at the same point, so a participant's command first writes the no-op a
// shard's would under its coordinator's session (`noopFirst`).
export function refusedOffShard(def: CommandDefinition<ShardServices>, noopFirst = false): CommandDefinition {
  const name = def.names[0]!;
  return {
    ...def,
    run(ctx, cmd) {
      if (noopFirst) checkDDLCoordinatorSession(ctx, cmd, name);
      throw new MongoError(ErrorCodes.IllegalOperation, shardOnlyMessage(name));
    },
  };
}
