import { bucketIndex, LATENCY_BOUNDS_SECONDS } from './latency_histogram.js';

// What a process counts of the commands it answers: per command, how many succeeded and failed
// and how long they took, in the buckets of latency_histogram.ts. Plain numbers on the request
// path (a map look-up and a few increments); Prometheus's types and text are made only when
// someone scrapes (prometheus_registry.ts), and serverStatus reads the same numbers.

// serverStatus's opcounters kinds: find is a query, getMore a getmore, the write commands their
// own, anything else a command.
export type OperationType = 'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command';

export function operationType(command: string): OperationType {
  switch (command) {
    case 'find': return 'query';
    case 'getMore': return 'getmore';
    case 'insert': case 'update': case 'delete': return command;
    default: return 'command';
  }
}

export interface CommandStats {
  readonly command: string;
  readonly type: OperationType;
  succeeded: number;
  failed: number;
  // Per bucket, not cumulative; the last is +Inf.
  readonly buckets: number[];
  sumSeconds: number;
}

export interface RetryStats {
  // Retryable write commands answered, in part or whole, from what an earlier try did.
  commands: number;
  statements: number;
}

export class CommandMetrics {
  private readonly byCommand = new Map<string, CommandStats>();
  readonly retries: RetryStats = { commands: 0, statements: 0 };

  // `command`: a name from the process's command table (or "unknown"), so the label stays bounded
  // whatever clients send.
  record(command: string, succeeded: boolean, seconds: number): void {
    let stats = this.byCommand.get(command);
    if (stats === undefined) {
      stats = { command, type: operationType(command), succeeded: 0, failed: 0, buckets: new Array<number>(LATENCY_BOUNDS_SECONDS.length + 1).fill(0), sumSeconds: 0 };
      this.byCommand.set(command, stats);
    }
    if (succeeded) stats.succeeded += 1;
    else stats.failed += 1;
    stats.buckets[bucketIndex(seconds)]! += 1;
    stats.sumSeconds += seconds;
  }

  recordRetriedStatements(statements: number): void {
    this.retries.commands += 1;
    this.retries.statements += statements;
  }

  commands(): Iterable<CommandStats> {
    return this.byCommand.values();
  }
}

// Kept per process object (a node's or a router's services), so several nodes in one test process
// do not share them, and the message wrapper and serverStatus find the same ones.
const byOwner = new WeakMap<object, CommandMetrics>();

export function commandMetricsOf(owner: object): CommandMetrics {
  let metrics = byOwner.get(owner);
  if (metrics === undefined) byOwner.set(owner, metrics = new CommandMetrics());
  return metrics;
}

// serverStatus's opLatencies, in MongoDB's shape: reads (queries and getMores), writes (inserts,
// updates, deletes) and commands (the rest), each with its total latency in microseconds and its
// operation count, and with `histograms`, the per-bucket counts keyed by each bucket's lower
// bound in microseconds (the buckets of latency_histogram.ts).
export interface LatencyCategory {
  latency: number;
  ops: number;
  histogram?: Array<{ micros: number; count: number }>;
}

export function opLatencies(metrics: CommandMetrics, histograms: boolean): Record<'reads' | 'writes' | 'commands', LatencyCategory> {
  const out = { reads: category(), writes: category(), commands: category() };
  for (const c of metrics.commands()) {
    const into = c.type === 'query' || c.type === 'getmore' ? out.reads : c.type === 'command' ? out.commands : out.writes;
    into.seconds += c.sumSeconds;
    c.buckets.forEach((n, i) => { into.buckets[i]! += n; });
  }
  const shape = (c: ReturnType<typeof category>): LatencyCategory => {
    const ops = c.buckets.reduce((a, b) => a + b, 0);
    const latency = Math.round(c.seconds * 1e6);
    if (!histograms) return { latency, ops };
    const histogram = c.buckets.map((count, i) => ({ micros: i === 0 ? 0 : Math.round(LATENCY_BOUNDS_SECONDS[i - 1]! * 1e6), count })).filter((b) => b.count > 0);
    return { latency, ops, histogram };
  };
  return { reads: shape(out.reads), writes: shape(out.writes), commands: shape(out.commands) };
}

function category(): { seconds: number; buckets: number[] } {
  return { seconds: 0, buckets: new Array<number>(LATENCY_BOUNDS_SECONDS.length + 1).fill(0) };
}
