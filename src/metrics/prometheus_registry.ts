import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CommandMetrics } from './command_metrics.js';
import { LATENCY_BOUNDS_SECONDS } from './latency_histogram.js';
import type { ConfigFigures, ProcessSources, ReplicationFigures, RouterFigures, ShardFigures } from './process_metrics.js';

// A process's metrics in Prometheus's text format, through prom-client: names under `docshard_`,
// seconds and bytes, counters ending in `_total`, metadata in `_info`, labels bounded by the
// cluster's shape (commands, collections, shards), never by keys or documents. Every value is read
// from the process when scraped, never kept twice: counters are the process's own cumulative
// numbers, so they only grow while it runs.

const PREFIX = 'docshard_';

interface Figures {
  shard: ShardFigures | undefined;
  config: ConfigFigures | undefined;
  router: RouterFigures | undefined;
  replication: ReplicationFigures | undefined;
}

export class MetricsRegistry {
  readonly registry = new Registry();
  private figures: Figures = { shard: undefined, config: undefined, router: undefined, replication: undefined };

  constructor(private readonly sources: ProcessSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    new Gauge({
      name: `${PREFIX}info`, help: 'The process: its role and version (always 1).', labelNames: ['role', 'version'], registers,
      collect() { this.set({ role: sources.role, version: sources.version }, 1); },
    });
    this.commandMetrics(sources.commands);
    new Gauge({ name: `${PREFIX}connections`, help: 'Client connections open now.', registers, collect() { this.set(sources.connections().current); } });
    new Counter({ name: `${PREFIX}connections_created_total`, help: 'Client connections accepted.', registers, collect() { setCounter(this, [{}, sources.connections().created]); } });
    new Gauge({ name: `${PREFIX}cursors_open`, help: 'Cursors open now.', registers, collect() { this.set(sources.cursorsOpen()); } });
    const storageSizeBytes = sources.storageSizeBytes;
    if (storageSizeBytes !== undefined) {
      new Gauge({ name: `${PREFIX}storage_size_bytes`, help: 'Size of the data files (LMDB) on disk.', registers, collect() { this.set(storageSizeBytes()); } });
    }
    if (sources.shard !== undefined) this.shardMetrics();
    if (sources.config !== undefined) this.configMetrics();
    if (sources.router !== undefined) this.routerMetrics();
    if (sources.replication !== undefined) this.replicationMetrics();
  }

  // The text a scrape answers. The figures of the role are read once per scrape, so that gauges
  // read together are of one moment.
  async text(): Promise<string> {
    this.figures = { shard: this.sources.shard?.(), config: this.sources.config?.(), router: this.sources.router?.(), replication: this.sources.replication?.() };
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private commandMetrics(commands: CommandMetrics): void {
    const registers = [this.registry];
    new Counter({
      name: `${PREFIX}operations_total`, help: 'Commands answered, by operation type (as serverStatus opcounters) and outcome.', labelNames: ['type', 'outcome'], registers,
      collect() {
        const totals = new Map<string, { type: string; outcome: string; n: number }>();
        for (const c of commands.commands()) {
          for (const [outcome, n] of [['success', c.succeeded], ['error', c.failed]] as const) {
            const key = `${c.type}/${outcome}`;
            const entry = totals.get(key) ?? totals.set(key, { type: c.type, outcome, n: 0 }).get(key)!;
            entry.n += n;
          }
        }
        this.reset();
        for (const { type, outcome, n } of totals.values()) this.inc({ type, outcome }, n);
      },
    });
    new CommandDurationHistogram(commands, registers);
    new Counter({ name: `${PREFIX}retryable_write_retried_commands_total`, help: 'Retryable write commands answered from what an earlier try did.', registers, collect() { setCounter(this, [{}, commands.retries.commands]); } });
    new Counter({ name: `${PREFIX}retryable_write_retried_statements_total`, help: 'Statements of retryable writes answered from what an earlier try did, not run again.', registers, collect() { setCounter(this, [{}, commands.retries.statements]); } });
  }

  private shardMetrics(): void {
    const registers = [this.registry];
    const shard = (): ShardFigures | undefined => this.figures.shard;
    const byCollection = (pick: (c: ShardFigures['collections'][number]) => [owned: number, orphaned: number]) => function collect(this: Gauge) {
      this.reset();
      const f = shard();
      for (const c of f?.collections ?? []) {
        const [owned, orphaned] = pick(c);
        this.set({ collection: c.ns, shard: f!.shard, state: 'owned' }, owned);
        this.set({ collection: c.ns, shard: f!.shard, state: 'orphaned' }, orphaned);
      }
    };
    new Gauge({
      name: `${PREFIX}collection_documents`, help: 'Documents of each collection this shard stores: those it owns and orphans awaiting deletion.', labelNames: ['collection', 'shard', 'state'], registers,
      collect: byCollection((c) => [c.documents - c.orphanedDocuments, c.orphanedDocuments]),
    });
    new Gauge({
      name: `${PREFIX}collection_size_bytes`, help: 'BSON bytes of each collection this shard stores, owned and orphaned.', labelNames: ['collection', 'shard', 'state'], registers,
      collect: byCollection((c) => [c.bytes - c.orphanedBytes, c.orphanedBytes]),
    });
    const migrations = (): ShardFigures['migrations'] | undefined => shard()?.migrations;
    new Counter({
      name: `${PREFIX}migrations_started_total`, help: 'Chunk migrations this shard started, as donor or recipient.', labelNames: ['role'], registers,
      collect() {
        setCounter(this, [{ role: 'donor' }, migrations()?.donorStarted ?? 0], [{ role: 'recipient' }, migrations()?.recipientStarted ?? 0]);
      },
    });
    new Counter({ name: `${PREFIX}migrations_committed_total`, help: 'Chunk migrations this shard donated that committed.', registers, collect() { setCounter(this, [{}, migrations()?.donorCommitted ?? 0]); } });
    new Counter({ name: `${PREFIX}migrations_aborted_total`, help: 'Chunk migrations this shard donated that aborted.', registers, collect() { setCounter(this, [{}, migrations()?.donorAborted ?? 0]); } });
    new Counter({ name: `${PREFIX}migration_cloned_documents_total`, help: 'Documents this shard cloned as a migration recipient.', registers, collect() { setCounter(this, [{}, migrations()?.clonedDocuments ?? 0]); } });
    new Counter({ name: `${PREFIX}migration_cloned_bytes_total`, help: 'Bytes this shard cloned as a migration recipient.', registers, collect() { setCounter(this, [{}, migrations()?.clonedBytes ?? 0]); } });
    new Gauge({
      name: `${PREFIX}range_deletion_tasks`, help: 'Range deletion tasks: pending (their migration undecided) and ready (waiting for or being deleted).', labelNames: ['state'], registers,
      collect() {
        const tasks = shard()?.rangeDeletionTasks;
        this.set({ state: 'pending' }, tasks?.pending ?? 0);
        this.set({ state: 'ready' }, tasks?.ready ?? 0);
      },
    });
  }

  private configMetrics(): void {
    const registers = [this.registry];
    const config = (): ConfigFigures | undefined => this.figures.config;
    new Gauge({
      name: `${PREFIX}chunks`, help: 'Chunks of each sharded collection per owning shard (config.chunks).', labelNames: ['collection', 'shard'], registers,
      collect() {
        this.reset();
        for (const c of config()?.chunks ?? []) this.set({ collection: c.ns, shard: c.shard }, c.count);
      },
    });
    new Gauge({
      name: `${PREFIX}shard_draining`, help: 'Each shard of the cluster: 1 while removeShard drains it.', labelNames: ['shard'], registers,
      collect() {
        this.reset();
        for (const s of config()?.shards ?? []) this.set({ shard: s.name }, s.draining ? 1 : 0);
      },
    });
    new Gauge({ name: `${PREFIX}balancer_enabled`, help: '1 when the balancer mode is full, 0 when it is off.', registers, collect() { this.set(config()?.balancer.enabled ? 1 : 0); } });
    new Gauge({ name: `${PREFIX}balancer_round_running`, help: '1 while a balancer round runs.', registers, collect() { this.set(config()?.balancer.roundRunning ? 1 : 0); } });
    new Counter({ name: `${PREFIX}balancer_rounds_total`, help: 'Balancer rounds run.', registers, collect() { setCounter(this, [{}, config()?.balancer.rounds ?? 0]); } });
  }

  private replicationMetrics(): void {
    const registers = [this.registry];
    const repl = (): ReplicationFigures | undefined => this.figures.replication;
    new Gauge({
      name: `${PREFIX}replica_set_member_state`, help: 'Each member of this replica set in its state as this member last heard it (always 1; the state is a label).', labelNames: ['set', 'member', 'state'], registers,
      collect() {
        this.reset();
        const r = repl();
        for (const m of r?.members ?? []) this.set({ set: r!.set, member: m.host, state: m.state }, 1);
      },
    });
    new Gauge({
      name: `${PREFIX}replication_lag_seconds`, help: "How far each member's last applied oplog entry is behind the primary's, as this member last heard.", labelNames: ['set', 'member'], registers,
      collect() {
        this.reset();
        const r = repl();
        for (const m of r?.members ?? []) if (m.lagSeconds !== undefined) this.set({ set: r!.set, member: m.host }, m.lagSeconds);
      },
    });
    new Gauge({
      name: `${PREFIX}replica_set_term`, help: 'The election term this member is in.', labelNames: ['set'], registers,
      collect() { this.reset(); const r = repl(); if (r) this.set({ set: r.set }, r.term); },
    });
    new Counter({
      name: `${PREFIX}replica_set_elections_won_total`, help: 'Elections this member won (it became primary) since it started.', labelNames: ['set'], registers,
      collect() { const r = repl(); if (r) setCounter(this, [{ set: r.set }, r.electionsWon]); else this.reset(); },
    });
    new Gauge({
      name: `${PREFIX}oplog_window_seconds`, help: 'Time between the oldest and the newest entry of this member\'s oplog.', labelNames: ['set'], registers,
      collect() { this.reset(); const r = repl(); if (r) this.set({ set: r.set }, r.oplogWindowSeconds); },
    });
  }

  private routerMetrics(): void {
    const registers = [this.registry];
    const router = (): RouterFigures | undefined => this.figures.router;
    new Counter({
      name: `${PREFIX}catalog_cache_refreshes_total`, help: 'Routing table loads: incremental (changed chunks) or full.', labelNames: ['kind'], registers,
      collect() {
        const refreshes = router()?.catalogCacheRefreshes;
        setCounter(this, [{ kind: 'incremental' }, refreshes?.incremental ?? 0], [{ kind: 'full' }, refreshes?.full ?? 0]);
      },
    });
    new Counter({ name: `${PREFIX}stale_config_retries_total`, help: 'Requests sent again after a shard answered StaleConfig or StaleDbVersion.', registers, collect() { setCounter(this, [{}, router()?.staleConfigRetries ?? 0]); } });
    new Gauge({
      name: `${PREFIX}replica_set_monitor_member`, help: 'Each member of the replica sets this router reaches, in the role its monitor last saw (always 1; the role is a label).', labelNames: ['set', 'member', 'role'], registers,
      collect() {
        this.reset();
        for (const m of router()?.monitoredMembers ?? []) this.set({ set: m.set, member: m.host, role: m.role }, 1);
      },
    });
    new Gauge({
      name: `${PREFIX}replica_set_monitor_rtt_seconds`, help: 'The round trip of a hello to each member of the replica sets this router reaches (a moving average).', labelNames: ['set', 'member'], registers,
      collect() {
        this.reset();
        for (const m of router()?.monitoredMembers ?? []) this.set({ set: m.set, member: m.host }, m.rttSeconds);
      },
    });
    new Counter({
      name: `${PREFIX}fast_path_requests_total`, help: 'Requests the router passed to one shard as bytes.', labelNames: ['path'], registers,
      collect() {
        setCounter(this, [{ path: 'insert' }, router()?.fastPaths.insert ?? 0], [{ path: 'update' }, router()?.fastPaths.update ?? 0], [{ path: 'find' }, router()?.fastPaths.find ?? 0]);
      },
    });
  }
}

// A counter's values are the process's own cumulative numbers, read at scrape time.
function setCounter<T extends string>(counter: Counter<T>, ...values: Array<[labels: Partial<Record<T, string>>, value: number]>): void {
  counter.reset();
  for (const [labels, value] of values) counter.inc(labels, value);
}

// docshard_command_duration_seconds: the histogram CommandMetrics keeps in plain arrays on the
// request path, handed to prom-client as the cumulative buckets, sum and count it prints.
class CommandDurationHistogram extends Histogram<'command'> {
  constructor(private readonly commands: CommandMetrics, registers: Registry[]) {
    super({ name: `${PREFIX}command_duration_seconds`, help: 'Time from receiving a command to its reply, per command.', labelNames: ['command'], buckets: [...LATENCY_BOUNDS_SECONDS], registers });
  }

  override async get(): Promise<Awaited<ReturnType<Histogram<'command'>['get']>>> {
    const base = await super.get();
    const name = `${PREFIX}command_duration_seconds`;
    const values: typeof base.values = [];
    for (const c of this.commands.commands()) {
      let cumulative = 0;
      c.buckets.forEach((n, i) => {
        cumulative += n;
        values.push({ metricName: `${name}_bucket`, labels: { command: c.command, le: i < LATENCY_BOUNDS_SECONDS.length ? LATENCY_BOUNDS_SECONDS[i]! : '+Inf' } as never, value: cumulative });
      });
      values.push({ metricName: `${name}_sum`, labels: { command: c.command }, value: c.sumSeconds });
      values.push({ metricName: `${name}_count`, labels: { command: c.command }, value: cumulative });
    }
    return { ...base, values };
  }
}
