import { rmSync } from 'node:fs';
import path from 'node:path';
import type { ObjectId } from 'bson';
import pino from 'pino';
import { errorReply, MongoError } from '../../src/base/errors.js';
import { ErrorCodes } from '../../src/base/error_codes.js';
import type { OpObserver } from '../../src/storage/op_observer.js';
import { FailPoints } from '../../src/base/fail_points.js';
import type { Clock } from '../../src/base/clock.js';
import { deserializeDocument, type Doc } from '../../src/bson/values.js';
import { fromPlacementTimestamp, shardVersionToBSON } from '../../src/catalog/chunk_version.js';
import type { ChunkType, CollectionType } from '../../src/catalog/type_chunk.js';
import { commandName } from '../../src/command_layer/args.js';
import type { CommandDefinition, CommandContext } from '../../src/mongod_commands/command.js';
import { configsvrCommitChunkMigrationCommand, configsvrEnsureChunkVersionIsGreaterThanCommand } from '../../src/mongod_commands/configsvr/configsvr_commands.js';
import { CursorManager } from '../../src/command_layer/cursor_manager.js';
import { listCollectionsCommand } from '../../src/mongod_commands/ddl/collections.js';
import { listIndexesCommand } from '../../src/mongod_commands/ddl/indexes.js';
import { donorCommands } from '../../src/mongod_commands/migration/donor_commands.js';
import { recipientCommands } from '../../src/mongod_commands/migration/recipient_commands.js';
import { flushRoutingTableCacheUpdatesCommand } from '../../src/mongod_commands/sharding/shard_commands.js';
import { ShardingCatalogManager } from '../../src/configsvr/sharding_catalog_manager.js';
import { DDLLockManager } from '../../src/ddl/ddl_lock_manager.js';
import { ActiveMigrationsRegistry } from '../../src/migration/active_migrations_registry.js';
import type { DonorEffect } from '../../src/migration/donor_effects.js';
import { MIGRATION_COORDINATORS_NS, migrationCoordinatorDocumentFromBSON, type MigrationDecision } from '../../src/migration/migration_coordinator_document.js';
import type { MigrationNode } from '../../src/migration/migration_node.js';
import { chunkContaining, recoverDonations } from '../../src/migration/migration_source_manager.js';
import type { MigrationDriverEffect } from '../../src/migration/migration_testing_knobs.js';
import { RangeDeleterService } from '../../src/migration/range_deleter_service.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON, type RangeDeletionTask } from '../../src/migration/range_deletion_task.js';
import { countRange } from '../../src/migration/range_orphans.js';
import { UserLoadMeter } from '../../src/migration/user_load_meter.js';
import { LocalCollections } from '../../src/query/exec/local_collection.js';
import { DEFAULT_MAX_ACCEPTABLE_LOGICAL_CLOCK_DRIFT_SECS, LogicalClock } from '../../src/sessions/logical_clock.js';
import { TransactionParticipants } from '../../src/sessions/transaction_participant.js';
import { SessionCatalog } from '../../src/sessions/session_catalog.js';
import { CriticalSection } from '../../src/shard/critical_section.js';
import { RemoteConfigReader } from '../../src/shard/remote_config_reader.js';
import { ShardMetadata } from '../../src/shard/shard_metadata.js';
import { ShardingState } from '../../src/shard/sharding_state.js';
import type { StorageEngine } from '../../src/storage/storage_engine.js';
import { WireClient } from '../../src/wire/client.js';
import { serializeWithRaw } from '../../src/wire/raw_bson.js';
import { DONOR, HOSTS, initialDocuments, NSS, RANGE, RECIPIENT, WORKLOAD, type Disks, type ShardName, type WorkloadWrite } from './migration_world_setup.js';
import { Incarnation, Scheduler } from './scheduler.js';
import { SimNetwork, type NetworkFaults } from './sim_network.js';
import { copyDisk, openSimStorage } from './sim_storage.js';

// The migration world: the real MigrationSourceManager and MigrationDestinationManager (with the
// chunk cloner, the range deleter, coordinator recovery at startup), each shard on its own LMDB
// disk, reached through the real command handlers, on a simulated network under the seeded
// scheduler, with the config server's real commit and fence on a disk of its own. A router
// writes to the range throughout. Shards crash before chosen effects and restart at once.

// How the config server treats the donor's _configsvrCommitChunkMigration: applies it and answers
// ('none'), never gets it, applies it but the answer is lost, or gets it only once everything
// else is over (after the donor timed out on it and any recovery fenced the chunk's version).
export type ConfigFault = 'none' | 'commitRequestLost' | 'commitReplyLost' | 'commitDelayed' | 'shardsLookupLost';

// `shard` crashes just before the `at`-th effect the drivers run (counted over both shards).
export interface Crash {
  readonly at: number;
  readonly shard: ShardName;
  // A step-down whose storage refuses writes a scheduler step before the drivers are interrupted,
  // as a member's does: its replication fences writes first, then tells the services.
  readonly fencedFirst?: boolean;
}

export interface WorldOptions {
  readonly crashes?: readonly Crash[];
  // `shard` steps down just before the `at`-th effect and is primary again at once (a new term),
  // as its primary-only services see it: its migrations interrupted and its range deleter stopped,
  // then, once no migration is registered, the range deleter started and its donations recovered.
  readonly stepDowns?: readonly Crash[];
  readonly configFault?: ConfigFault;
  // Without one, every ready step runs in the order posted.
  readonly seed?: number;
  // Disk work (asynchronous commits, flushes) only when no message is left to deliver.
  readonly slowDisk?: boolean;
  readonly waitForDelete?: boolean;
  // The donor steps down (and up again) as _shardsvrMoveRange arrives, while the migration it
  // starts is still reading the collection from the config server: no driver is there yet to
  // interrupt, and the one that starts next finds its writes refused.
  readonly stepDownWhileStarting?: boolean;
}

// One incarnation of a donor: what it began from and the effects it ran.
export interface DonorLife {
  readonly recovered: { readonly decision: MigrationDecision | undefined } | undefined;
  readonly effects: DonorEffect[];
}

// A range deletion task as a restarted shard found it on its disk.
export interface TaskAtRestart {
  readonly shard: ShardName;
  readonly task: RangeDeletionTask;
  readonly docsInRange: number;
  // The config server's owner of the range at that moment.
  readonly rangeOwner: string;
}

export interface ShardAtEnd {
  readonly coordinatorDocuments: number;
  readonly tasks: RangeDeletionTask[];
  // {_id, a, v} of each document, by _id.
  readonly inRange: Doc[];
  readonly outside: Doc[];
  readonly criticalSectionHeld: boolean;
  readonly migrating: boolean;
}

export interface WorldEnd {
  readonly rangeOwner: string;
  readonly shards: Readonly<Record<ShardName, ShardAtEnd>>;
  // What the documents must be: every acknowledged write applied.
  readonly expected: { readonly inRange: Doc[]; readonly outside: Doc[] };
  readonly workloadDone: boolean;
  // _shardsvrMoveRange's reply to the config server, if one came.
  readonly moveReply: Doc | undefined;
  readonly donorLives: readonly DonorLife[];
  readonly tasksAtRestarts: readonly TaskAtRestart[];
  readonly effectsRun: number;
  // Unexpected failures: a handler that threw something other than a MongoError, a recovery that failed.
  readonly problems: readonly string[];
  readonly trace: readonly string[];
}

const MAX_STEPS = 20_000;
const SHARD_PARAMETERS = { migrateClonePercentUnderLoad: 7, receiveChunkWaitForRangeDeleterTimeoutMS: 10_000 };
// Small batches, so that deleting the range takes several, each taking its documents off the
// task's counters.
const RANGE_DELETER = { batchSize: 2, batchDelayMs: 20, orphanCleanupDelayMs: 900_000 };
const IDLE_COUNTERS = { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 };
const NEVER = new Promise<void>(() => undefined);

// The command handlers a simulated shard runs as a shard would.
const SHARD_COMMANDS = commandTable<SimShardNode>([...donorCommands, ...recipientCommands, listIndexesCommand, listCollectionsCommand, flushRoutingTableCacheUpdatesCommand]);
const CONFIG_COMMANDS = commandTable<ConfigNode>([configsvrCommitChunkMigrationCommand, configsvrEnsureChunkVersionIsGreaterThanCommand]);

// Where the virtual wall clock starts: dates and timestamps of a realistic size, the same every run.
const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);

type SimShardNode = MigrationNode & { readonly cursors: CursorManager; readonly wallClock: Clock };

interface Life<Node> {
  readonly owner: Incarnation;
  readonly storage: StorageEngine;
  readonly local: LocalCollections;
  readonly node: Node;
}

interface SimShard {
  readonly name: ShardName;
  readonly dir: string;
  lives: number;
  life: Life<SimShardNode>;
}

interface ConfigNode {
  readonly catalogManager: ShardingCatalogManager;
  readonly failPoints: FailPoints;
  readonly wallClock: Clock;
}

export async function runMigrationWorld(templates: Disks, root: string, options: WorldOptions = {}): Promise<WorldEnd> {
  const dirs = { config: path.join(root, 'config'), shard0: path.join(root, 'shard0'), shard1: path.join(root, 'shard1') };
  for (const name of ['config', DONOR, RECIPIENT] as const) copyDisk(templates[name], dirs[name]);
  const world = new MigrationWorld(dirs, options);
  try {
    return await world.run();
  } finally {
    await world.close();
    rmSync(root, { recursive: true, force: true });
  }
}

class MigrationWorld {
  private readonly scheduler: Scheduler;
  private readonly network: SimNetwork;
  private readonly config: Life<ConfigNode>;
  private readonly shards: Record<ShardName, SimShard>;
  private readonly router = new Incarnation('router');
  private readonly model = new Map<number, Doc>(initialDocuments().map((d) => [d._id as number, project(d)]));
  // Each incarnation's current donor life; a step-up begins another in the same incarnation.
  private readonly donorLives = new Map<Incarnation, DonorLife>();
  private readonly pastDonorLives: DonorLife[] = [];
  private readonly tasksAtRestarts: TaskAtRestart[] = [];
  private readonly problems: string[] = [];
  private effectsRun = 0;
  private steppedDownWhileStarting = false;
  private workloadDone = false;
  private moveReply: Doc | undefined;

  constructor(dirs: Disks, private readonly options: WorldOptions) {
    this.scheduler = new Scheduler(options);
    this.network = new SimNetwork(this.scheduler, configFaults(options.configFault ?? 'none'));
    this.config = this.startConfig(dirs.config);
    this.shards = {
      shard0: { name: DONOR, dir: dirs.shard0, lives: 1, life: this.start(DONOR, dirs.shard0, 1) },
      shard1: { name: RECIPIENT, dir: dirs.shard1, lives: 1, life: this.start(RECIPIENT, dirs.shard1, 1) },
    };
  }

  async run(): Promise<WorldEnd> {
    // What the config server's MoveRangeCatalog sends the donor for a moveRange.
    const move = { _shardsvrMoveRange: NSS, min: RANGE.min, max: RANGE.max, toShard: RECIPIENT, waitForDelete: this.options.waitForDelete ?? false };
    this.network.clientOf(this.config.owner).command(HOSTS[DONOR], 'admin', move)
      .then((reply) => { this.moveReply = reply; }, (err: unknown) => { this.moveReply = errorReply(err); });
    void this.runWorkload();
    await this.scheduler.run(MAX_STEPS);
    return this.end();
  }

  async close(): Promise<void> {
    for (const life of [this.config, ...Object.values(this.shards).map((s) => s.life)]) if (life.owner.alive) await life.storage.close();
  }

  private startConfig(dir: string): Life<ConfigNode> {
    const owner = new Incarnation('config');
    const storage = openSimStorage(dir, this.scheduler, owner);
    const local = new LocalCollections(storage);
    const clusterId = local.findOne('config.version')!.clusterId as ObjectId;
    // The commit and the fence send nothing; the client is there because the catalog has one.
    const failPoints = new FailPoints();
    const clock = this.scheduler.clockOf(owner, SIM_EPOCH_MS);
    const ddlLocks = new DDLLockManager(clock, failPoints);
    const catalogManager = new ShardingCatalogManager(local, new WireClient(), () => HOSTS.config, { clusterId: () => clusterId, connectionString: () => HOSTS.config }, pino({ level: 'silent' }), ddlLocks, new LogicalClock(Date.now, DEFAULT_MAX_ACCEPTABLE_LOGICAL_CLOCK_DRIFT_SECS), clock);
    const node: ConfigNode = { catalogManager, failPoints, wallClock: clock };
    this.network.listen(HOSTS.config, owner, (db, body) => this.reply(() => this.configCommand(local, node, db, deserializeDocument(body))));
    return { owner, storage, local, node };
  }

  // The config server's side: reads of config.*, changelog entries, and the real commit and fence.
  private configCommand(local: LocalCollections, node: ConfigNode, db: string, cmd: Doc): Doc | Promise<Doc> {
    const name = commandName(cmd);
    if (name === 'find') {
      const ns = `${db}.${String(cmd.find)}`;
      const firstBatch = local.find(ns, (cmd.filter ?? {}) as Doc, cmd.sort === undefined ? {} : { sort: cmd.sort as Doc });
      return { cursor: { firstBatch, id: 0, ns }, ok: 1 };
    }
    // config.changelog: history only, which nothing here reads.
    if (name === 'insert') return { n: (cmd.documents as Doc[]).length, ok: 1 };
    return runHandler(CONFIG_COMMANDS, name, node, db, cmd);
  }

  // A shard's process start, as shard_process.ts composes it: its disk, the range deleter resuming
  // ready tasks, every coordinator document recovered, then its port opened.
  private start(name: ShardName, dir: string, life: number): Life<SimShardNode> {
    const owner = new Incarnation(`${name}#${life}`);
    const storage = openSimStorage(dir, this.scheduler, owner);
    const local = new LocalCollections(storage);
    const state = new ShardingState(local);
    const client = this.network.clientOf(owner);
    const clock = this.scheduler.clockOf(owner, SIM_EPOCH_MS);
    const logger = pino({ level: 'silent' });
    const [host, port] = HOSTS[name].split(':') as [string, string];
    const sessionCatalog = new SessionCatalog(storage, new LogicalClock(Date.now));
    const node: SimShardNode = {
      options: { bindIp: host, port: Number(port), parameters: SHARD_PARAMETERS },
      storage, local, client, logger,
      failPoints: new FailPoints(),
      sharding: { state, metadata: new ShardMetadata(() => state.shardName, () => new RemoteConfigReader(client, HOSTS.config)), criticalSection: new CriticalSection(clock) },
      migrations: {
        registry: new ActiveMigrationsRegistry(),
        rangeDeleter: new RangeDeleterService(storage, local, logger, RANGE_DELETER, clock),
        source: undefined,
        destination: undefined,
        loadMeter: new UserLoadMeter(IDLE_COUNTERS),
        clock,
        testingKnobs: { beforeEffect: (next) => this.beforeEffect(owner, next) },
      },
      cursors: new CursorManager(clock),
      wallClock: clock,
      sessionCatalog,
      transactions: new TransactionParticipants(storage, sessionCatalog, new LogicalClock(Date.now), clock, () => undefined),
    };
    const persisted = local.find(MIGRATION_COORDINATORS_NS).map(migrationCoordinatorDocumentFromBSON);
    if (persisted.length > 0) this.donorLives.set(owner, { recovered: { decision: persisted[0]!.decision }, effects: [] });
    node.migrations.rangeDeleter.start();
    for (const recovery of recoverDonations(node)) recovery.catch((err: unknown) => this.problems.push(`${owner.name} recovery failed: ${String(err)}`));
    this.network.listen(HOSTS[name], owner, (db, body) => this.reply(() => this.shardCommand(node, db, deserializeDocument(body))));
    return { owner, storage, local, node };
  }

  private shardCommand(node: SimShardNode, db: string, cmd: Doc): Doc | Promise<Doc> {
    const name = commandName(cmd);
    if (name === 'update' || name === 'delete') return shardWrite(node, db, cmd);
    const reply = runHandler(SHARD_COMMANDS, name, node, db, cmd);
    if (name === '_shardsvrMoveRange' && this.options.stepDownWhileStarting === true && !this.steppedDownWhileStarting) {
      this.steppedDownWhileStarting = true;
      this.stepDownAndUp(Object.values(this.shards).find((s) => s.life.node === node)!, false);
    }
    return reply;
  }

  private async reply(handle: () => Doc | Promise<Doc>): Promise<Buffer> {
    let reply: Doc;
    try {
      reply = await handle();
    } catch (err) {
      if (!(err instanceof MongoError)) this.problems.push(`a command failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}`);
      reply = errorReply(err);
    }
    return serializeWithRaw(reply);
  }

  // The knob every driver effect passes: counts it, crashes a shard when this is its moment, and
  // keeps the donors' effects for the ordering check.
  private beforeEffect(owner: Incarnation, next: MigrationDriverEffect): Promise<void> | undefined {
    const at = this.effectsRun++;
    for (const crash of this.options.crashes ?? []) if (crash.at === at) this.crash(this.shards[crash.shard]);
    for (const stepDown of this.options.stepDowns ?? []) if (stepDown.at === at) this.stepDownAndUp(this.shards[stepDown.shard], stepDown.fencedFirst === true);
    if (!owner.alive) return NEVER;
    this.scheduler.trace.push(`  ${owner.name} ${next.effect.type}`);
    if (next.driver === 'donor') {
      let life = this.donorLives.get(owner);
      if (life === undefined) this.donorLives.set(owner, (life = { recovered: undefined, effects: [] }));
      life.effects.push(next.effect);
    }
    return undefined;
  }

  // A kill -9: the process's memory, messages and timers go; its disk stays; it restarts at once.
  private crash(shard: SimShard): void {
    const { owner, storage } = shard.life;
    if (!owner.alive) return;
    this.scheduler.kill(owner);
    this.network.crashed(owner);
    this.scheduler.trace.push(`  ${owner.name} crashes`);
    this.scheduler.postFirst(undefined, `${shard.name} restarts`, async () => {
      await storage.close();
      shard.life = this.start(shard.name, shard.dir, ++shard.lives);
      this.noteTasks(shard);
    });
  }

  // What src/process's migration and range deleter services do at a step-down and the step-up after
  // it. Until the step-up (a scheduler step later at least) the shard's storage refuses every
  // document write, as a member's does when it is not primary.
  private stepDownAndUp(shard: SimShard, fencedFirst: boolean): void {
    const { owner, node, storage } = shard.life;
    if (!owner.alive) return;
    this.scheduler.trace.push(`  ${owner.name} steps down`);
    const refuse = (): never => {
      throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary');
    };
    const fence: OpObserver = { onInsert: refuse, onUpdate: refuse, onDelete: refuse };
    storage.observers.push(fence);
    const interrupt = (): Promise<void> | undefined => {
      node.migrations.destination?.interrupt();
      const interrupted = node.migrations.source?.interrupt();
      node.migrations.rangeDeleter.stop();
      return interrupted;
    };
    const now = fencedFirst ? undefined : interrupt();
    void (async () => {
      const donor = now ?? await new Promise<Promise<void> | undefined>((resolve) => this.scheduler.post(owner, `${owner.name} interrupts its services`, () => resolve(interrupt())));
      await new Promise<void>((resolve) => this.scheduler.post(owner, `${owner.name} stepped down`, resolve));
      await donor;
      await node.migrations.registry.idle();
      if (!owner.alive) return;
      storage.observers.splice(storage.observers.indexOf(fence), 1);
      this.scheduler.trace.push(`  ${owner.name} steps up`);
      const life = this.donorLives.get(owner);
      if (life !== undefined) this.pastDonorLives.push(life);
      this.donorLives.delete(owner);
      const persisted = shard.life.local.find(MIGRATION_COORDINATORS_NS).map(migrationCoordinatorDocumentFromBSON);
      if (persisted.length > 0) this.donorLives.set(owner, { recovered: { decision: persisted[0]!.decision }, effects: [] });
      node.migrations.rangeDeleter.start();
      for (const recovery of recoverDonations(node)) recovery.catch((err: unknown) => this.problems.push(`${owner.name} recovery after step-up failed: ${String(err)}`));
    })();
  }

  private noteTasks(shard: SimShard): void {
    const { storage, local } = shard.life;
    for (const task of local.find(RANGE_DELETIONS_NS).map(rangeDeletionTaskFromBSON)) {
      const docsInRange = countRange(storage, task.nss, task.range, task.keyPattern).docs;
      this.tasksAtRestarts.push({ shard: shard.name, task, docsInRange, rangeOwner: this.rangeOwner() });
    }
  }

  // A router with an always fresh routing table: each write goes to the range's owner with its
  // shard version, and is retried (with backoff) until a shard acknowledges it.
  private async runWorkload(): Promise<void> {
    const clock = this.scheduler.clockOf(this.router, SIM_EPOCH_MS);
    const client = this.network.clientOf(this.router);
    for (const write of WORKLOAD) {
      if (write.afterMs > 0) await clock.sleep(write.afterMs);
      for (let attempt = 0; ; attempt++) {
        const { shard, shardVersion } = this.route(write.a);
        const reply = await client.command(HOSTS[shard], 'db', { ...write.command, shardVersion }).catch((err: unknown) => errorReply(err));
        if (reply.ok === 1) break;
        await clock.sleep(Math.min(5000, 5 * 2 ** attempt));
      }
      applyWrite(this.model, write);
    }
    this.workloadDone = true;
  }

  private route(a: number): { shard: ShardName; shardVersion: Doc } {
    const { collection, chunks } = this.configChunks();
    const shard = chunkContaining(chunks, { a })!.shard as ShardName;
    const newest = chunks.filter((c) => c.shard === shard).map((c) => c.lastmod).reduce((x, y) => (y.greaterThan(x) ? y : x));
    return { shard, shardVersion: shardVersionToBSON(fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, newest)) };
  }

  private rangeOwner(): string {
    return chunkContaining(this.configChunks().chunks, RANGE.min)!.shard;
  }

  private configChunks(): { collection: CollectionType; chunks: ChunkType[] } {
    const collection = this.config.local.findOne('config.collections', { _id: NSS }) as unknown as CollectionType;
    return { collection, chunks: this.config.local.find('config.chunks', { uuid: collection.uuid }) as unknown as ChunkType[] };
  }

  private end(): WorldEnd {
    const shardAtEnd = (shard: SimShard): ShardAtEnd => {
      const { local, node } = shard.life;
      const docs = local.find(NSS).map(project).sort(byId);
      return {
        coordinatorDocuments: local.find(MIGRATION_COORDINATORS_NS).length,
        tasks: local.find(RANGE_DELETIONS_NS).map(rangeDeletionTaskFromBSON),
        inRange: docs.filter(inRange),
        outside: docs.filter((d) => !inRange(d)),
        criticalSectionHeld: node.sharding.criticalSection.isHeld(NSS),
        migrating: node.migrations.registry.activeDonation() !== undefined || node.migrations.registry.activeReceive() !== undefined,
      };
    };
    const expected = [...this.model.values()].sort(byId);
    return {
      rangeOwner: this.rangeOwner(),
      shards: { shard0: shardAtEnd(this.shards.shard0), shard1: shardAtEnd(this.shards.shard1) },
      expected: { inRange: expected.filter(inRange), outside: expected.filter((d) => !inRange(d)) },
      workloadDone: this.workloadDone,
      moveReply: this.moveReply,
      donorLives: [...this.pastDonorLives, ...this.donorLives.values()],
      tasksAtRestarts: this.tasksAtRestarts,
      effectsRun: this.effectsRun,
      problems: this.problems,
      trace: this.scheduler.trace,
    };
  }
}

// What a shard's write commands do that matters here (dispatcher.ts and crud/): a write to a
// collection under a critical section does not run (a shard makes it wait; the router here
// retries), a routed write's shard version is checked (refreshing from the config server, or
// waiting out a donation's recovery), then its statements are applied in one write unit.
async function shardWrite(node: SimShardNode, db: string, cmd: Doc): Promise<Doc> {
  const name = commandName(cmd);
  const ns = `${db}.${String(cmd[name])}`;
  const admit = (): void => {
    if (node.sharding.criticalSection.isHeld(ns)) throw new MongoError(ErrorCodes.ExceededTimeLimit, `a migration holds the critical section of ${ns}`);
  };
  admit();
  await node.sharding.metadata.checkRequest(db, ns, cmd);
  admit();
  const n = node.local.write((w) => name === 'update'
    ? (cmd.updates as Doc[]).reduce((sum, u) => sum + w.update(ns, u.q as Doc, u.u as Doc, { upsert: u.upsert === true }), 0)
    : (cmd.deletes as Doc[]).reduce((sum, d) => sum + w.delete(ns, d.q as Doc, { multi: d.limit !== 1 }), 0));
  return { n, ok: 1 };
}

function runHandler<S>(table: ReadonlyMap<string, CommandDefinition<S>>, name: string, node: S, db: string, cmd: Doc): Doc | Promise<Doc> {
  const def = table.get(name);
  if (def === undefined) throw new MongoError(ErrorCodes.CommandNotFound, `no such command: '${name}'`);
  // Each handler is typed with what it reads, which the simulated node has: a shard's
  // MigrationNode and cursors, a config server's catalog manager and fail points.
  const ctx: CommandContext<S> = { node, conn: { id: 0, remote: 'sim', local: 'sim' }, db };
  return def.run(ctx, cmd);
}

function commandTable<S>(defs: readonly CommandDefinition<S>[]): ReadonlyMap<string, CommandDefinition<S>> {
  return new Map(defs.flatMap((def) => def.names.map((name) => [name, def] as const)));
}

// 'shardsLookupLost': the connection of the first read of config.shards breaks (the donor looking
// up the shards' hosts for _recvChunkStart).
function configFaults(fault: ConfigFault): NetworkFaults {
  const commit = (command: string): boolean => command === '_configsvrCommitChunkMigration';
  let lookups = 0;
  return {
    request: (command, _from, host, body) => {
      if (fault === 'shardsLookupLost' && body.find === 'shards' && host === HOSTS.config && lookups++ === 0) return 'reset';
      return !commit(command) ? 'deliver' : fault === 'commitRequestLost' ? 'drop' : fault === 'commitDelayed' ? 'delay' : 'deliver';
    },
    reply: (command) => (commit(command) && fault === 'commitReplyLost' ? 'drop' : 'deliver'),
  };
}

function applyWrite(model: Map<number, Doc>, write: WorkloadWrite): void {
  const id = write.a;
  if (write.command.delete !== undefined) {
    model.delete(id);
    return;
  }
  const [{ u }] = write.command.updates as [{ u: Doc }];
  const set = u.$set as Doc | undefined;
  if (set === undefined) model.set(id, project(u));
  else if (model.has(id)) model.set(id, { ...model.get(id), ...set });
}

function project(doc: Doc): Doc {
  return { _id: doc._id, a: doc.a, v: doc.v };
}

function inRange(doc: Doc): boolean {
  return (doc.a as number) < RANGE.max.a;
}

function byId(x: Doc, y: Doc): number {
  return (x._id as number) - (y._id as number);
}
