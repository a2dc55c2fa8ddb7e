import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ReplicationCoordinator } from '../replication/replication_coordinator.js';
import type { MongodServices } from './command.js';

// The replication coordinator of a --replSet member; a standalone node answers as mongod without
// --replSet does.
export function replicationOf(node: MongodServices, refusal = 'not running with --replSet'): ReplicationCoordinator {
  if (node.replication === undefined) throw new MongoError(ErrorCodes.NoReplicationEnabled, refusal);
  return node.replication;
}
