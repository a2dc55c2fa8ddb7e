import type { NodeOptions, ShardServices } from '../mongod_commands/command.js';
import { buildCommandTable, dispatchCommand } from '../mongod_commands/dispatcher.js';
import { shardCommands } from '../mongod_commands/registry.js';
import { recoverDonations } from '../migration/migration_source_manager.js';
import { setProcessOperationClock } from '../base/operation_clock.js';
import type { MongodPorts } from './mongod_ports.js';
import { nodeCore } from './mongod_services.js';
import { serveMongod, type RunningNode } from './mongod_server.js';
import { shardDDL } from './shard_ddl.js';

// The composition root of a shard: every node's services, its DDL coordinators and critical
// sections, and a shard's command table, built from the ports it is given.
export function startShard(options: NodeOptions, ports: MongodPorts): Promise<RunningNode<ShardServices>> {
  setProcessOperationClock(ports.wallClock);
  const core = nodeCore(options, ports);
  const { ddl, recover } = shardDDL(core);
  const services: ShardServices = Object.assign(core, { role: 'shard' as const, ddl, commands: buildCommandTable(shardCommands) });
  return serveMongod(services, ports, {
    dispatch: (conn, cmd) => dispatchCommand(services, conn, cmd),
    beforeListen() {
      services.migrations.rangeDeleter.start();
      // Before the port opens: the blocked collections and databases stay blocked and the
      // coordinators a crash interrupted hold their locks before a new DDL can ask for them.
      recover();
      // Registered before the port opens, so no new migration overlaps a recovering one.
      for (const recovery of recoverDonations(services)) recovery.catch((err: unknown) => services.logger.error({ c: 'MIGRATION', err }, 'Migration recovery failed'));
    },
    afterListen() {},
    async stop() {
      services.ddl.coordinators.stop();
    },
  });
}
