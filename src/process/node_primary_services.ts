import type { ReshardingCoordinatorService } from '../resharding/resharding_coordinator.js';
import type { MongodServices, ShardServices } from '../mongod_commands/command.js';
import type { Balancer } from '../configsvr/balancer.js';
import type { ShardHostsUpdater } from '../configsvr/shard_hosts_updater.js';
import { recoverDonations } from '../migration/migration_source_manager.js';
import type { PrimaryOnlyService } from './primary_only_services.js';

// The node's primary-only services as the registry starts and stops them, each from its persisted
// state documents: config.transactions (the transactions prepared here), config.transaction_coordinators, config.rangeDeletions,
// config.system.sharding_ddl_coordinators, config.migrationCoordinators,
// config.localReshardingOperations.recipient.

export function transactionCoordinatorService(node: MongodServices): PrimaryOnlyService {
  return {
    name: 'TransactionCoordinatorService',
    onStepUp(term) {
      // Participants first: a recovered coordinator's decision finds its prepared transaction.
      const prepared = node.transactions.recoverPrepared();
      if (prepared > 0) node.logger.info({ c: 'TXN', prepared, term: term.term }, 'Recovered prepared transactions');
      const coordinating = node.transactionCoordinators.recover();
      if (coordinating > 0) node.logger.info({ c: 'TXN', coordinating, term: term.term }, 'Recovered transaction coordinators');
    },
    onStepDown(atShutdown) {
      node.transactionCoordinators.stop();
      if (!atShutdown) node.transactions.stepDown();
    },
  };
}

export function rangeDeleterService(node: MongodServices): PrimaryOnlyService {
  return {
    name: 'RangeDeleterService',
    onStepUp(term) {
      node.migrations.rangeDeleter.start(() => term.isCurrent());
    },
    onStepDown() {
      node.migrations.rangeDeleter.stop();
    },
  };
}

export function ddlCoordinatorService(node: ShardServices): PrimaryOnlyService {
  return {
    name: 'ShardingDDLCoordinatorService',
    onStepUp() {
      node.ddl.coordinators.recover();
    },
    onStepDown(atShutdown) {
      node.ddl.coordinators.stop(atShutdown ? 'shutdown' : 'stepDown');
    },
  };
}

// The migrations this shard donates or receives: the donations its coordinator documents name are
// taken up at step-up (finished or aborted, as recovery decides); those in flight at step-down are
// interrupted, and the next step-up waits for them to have ended.
export function migrationService(node: ShardServices): PrimaryOnlyService {
  return {
    name: 'MigrationService',
    onStepUp() {
      for (const recovery of recoverDonations(node)) recovery.catch((err: unknown) => node.logger.error({ c: 'MIGRATION', err }, 'Migration recovery failed'));
    },
    async onStepDown(atShutdown) {
      // At shutdown the process ends with them; its next start recovers them.
      if (atShutdown) return;
      node.migrations.destination?.interrupt();
      await node.migrations.source?.interrupt();
      await node.migrations.registry.idle();
    },
  };
}

export function balancerService(balancer: Balancer): PrimaryOnlyService {
  return {
    name: 'Balancer',
    onStepUp() {
      balancer.start();
    },
    // Resolves once the round running has ended: no migration starts after it.
    onStepDown: () => balancer.stop(),
  };
}

// The reshardings the previous primary persisted resume in their persisted state; a step-down
// stops those running here.
export function reshardingCoordinatorService(service: ReshardingCoordinatorService): PrimaryOnlyService {
  return {
    name: 'ReshardingCoordinatorService',
    onStepUp() {
      service.recover();
    },
    onStepDown() {
      service.stepDown();
    },
  };
}

// The recipients of reshardings this shard takes part in, each from its state document
// (config.localReshardingOperations.recipient): resumed where it was persisted at step-up, a
// restart among them; stopped where they are at step-down.
export function reshardingRecipientService(node: ShardServices): PrimaryOnlyService {
  return {
    name: 'ReshardingRecipientService',
    onStepUp(term) {
      const resumed = node.reshardingRecipients.recover();
      if (resumed > 0) node.logger.info({ c: 'RESHARD', resumed, term: term.term }, 'Resumed resharding recipients');
    },
    onStepDown() {
      node.reshardingRecipients.stepDown();
    },
  };
}

// config.shards.host of each replica set shard follows its membership from the primary's monitors.
export function shardHostsService(updater: ShardHostsUpdater): PrimaryOnlyService {
  return {
    name: 'ShardHostsUpdater',
    onStepUp(term) {
      updater.start(() => term.isCurrent());
    },
    onStepDown() {
      updater.stop();
    },
  };
}
