import type { NodeOptions, ShardServices } from '../mongod_commands/command.js';
import { buildCommandTable, dispatchCommand } from '../mongod_commands/dispatcher.js';
import { shardCommands } from '../mongod_commands/registry.js';
import { setProcessOperationClock } from '../base/operation_clock.js';
import type { MongodPorts } from './mongod_ports.js';
import { nodeCore } from './mongod_services.js';
import { serveMongod, type RunningNode } from './mongod_server.js';
import { shardDDL } from './shard_ddl.js';
import { PrimaryOnlyServiceRegistry } from './primary_only_services.js';
import { ddlCoordinatorService, migrationService, rangeDeleterService, reshardingRecipientService } from './node_primary_services.js';
import { ReshardingRecipientService } from '../resharding/resharding_recipient.js';

// The composition root of a shard: every node's services, its DDL coordinators and critical
// sections, and a shard's command table, built from the ports it is given.
export function startShard(options: NodeOptions, ports: MongodPorts): Promise<RunningNode<ShardServices>> {
  setProcessOperationClock(ports.wallClock);
  const primaryOnly = new PrimaryOnlyServiceRegistry(ports.control.logger);
  const core = nodeCore(options, ports, primaryOnly);
  const { ddl, restoreCriticalSections } = shardDDL(core);
  const reshardingRecipients = new ReshardingRecipientService(core);
  const services: ShardServices = Object.assign(core, { role: 'shard' as const, ddl, reshardingRecipients, commands: buildCommandTable(shardCommands) });
  // Started before the port opens outside a replica set: the coordinators a crash interrupted hold
  // their locks before a new DDL can ask for them, and the donations recovering are registered
  // before a new migration could overlap them.
  primaryOnly.register(rangeDeleterService(services));
  primaryOnly.register(ddlCoordinatorService(services));
  primaryOnly.register(migrationService(services));
  primaryOnly.register(reshardingRecipientService(services));
  return serveMongod(services, ports, {
    dispatch: (conn, cmd) => dispatchCommand(services, conn, cmd),
    // Before the port opens: the blocked collections and databases stay blocked.
    beforeListen: restoreCriticalSections,
    afterListen() {},
    primaryOnly,
  });
}
