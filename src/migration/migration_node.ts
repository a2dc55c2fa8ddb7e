import type { Logger } from 'pino';
import type { Clock } from '../base/clock.js';
import type { FailPoints } from '../base/fail_points.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { CriticalSection } from '../shard/critical_section.js';
import type { ShardMetadata } from '../shard/shard_metadata.js';
import type { ShardingState } from '../shard/sharding_state.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { Network } from '../wire/network.js';
import type { ActiveMigrationsRegistry } from './active_migrations_registry.js';
import type { MigrationDestinationManager } from './migration_destination_manager.js';
import type { MigrationSourceManager } from './migration_source_manager.js';
import type { MigrationTestingKnobs } from './migration_testing_knobs.js';
import type { RangeDeleterService } from './range_deleter_service.js';
import type { UserLoadMeter } from './user_load_meter.js';
import type { TransactionParticipants } from '../sessions/transaction_participant.js';
import type { SessionCatalog } from '../sessions/session_catalog.js';

// A shard's migration machinery: the donation or reception in flight (the last one stays to
// answer late commands), the range deleter, and the clock the drivers and the range deleter wait
// on (phase timeouts, polls, retries, delays).
export interface MigrationRuntime {
  readonly registry: ActiveMigrationsRegistry;
  readonly rangeDeleter: RangeDeleterService;
  source: MigrationSourceManager | undefined;
  destination: MigrationDestinationManager | undefined;
  // The user load the clone pacer judges.
  readonly loadMeter: UserLoadMeter;
  readonly clock: Clock;
  readonly testingKnobs?: MigrationTestingKnobs;
}

// What the migration drivers use of the shard they run on: the layers below them and nothing of
// the command layer that calls them (a node's services satisfy it as they are). Their storage is
// the shard's, their network (`client`) and clock are interfaces: a process gives them its
// WireClient and timers, the crash test a simulated network and a virtual clock.
export interface MigrationNode {
  readonly options: {
    readonly bindIp: string;
    readonly port: number;
    readonly parameters: { readonly migrateClonePercentUnderLoad: number; readonly receiveChunkWaitForRangeDeleterTimeoutMS: number };
  };
  readonly storage: StorageEngine;
  readonly local: LocalCollections;
  readonly client: Network;
  readonly logger: Logger;
  readonly failPoints: FailPoints;
  // The shard's identity and metadata, and its critical section, which a donor enters.
  readonly sharding: { readonly state: ShardingState; readonly metadata: ShardMetadata; readonly criticalSection: CriticalSection };
  readonly migrations: MigrationRuntime;
  // The sessions' retryable writes, whose history of a range goes with it.
  readonly sessionCatalog: SessionCatalog;
  // The transactions prepared on the shard: a donor's critical section waits for their decisions.
  readonly transactions: Pick<TransactionParticipants, 'preparedOn'>;
  // On a replica set member: resolves once what it has written is majority-committed, rejects if
  // it stops being primary first (src/command_layer/replication_waits.ts). Absent elsewhere.
  readonly replicationWaits?: { awaitMajority(): Promise<void> };
}
