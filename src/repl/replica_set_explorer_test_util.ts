import type { ReplEffect } from './effects.js';
import { NO_VOTE, type LastVote } from './last_vote.js';
import type { ReplMessage } from './messages.js';
import { compareOpTime } from './op_time.js';
import type { OplogEntry } from './oplog_entry.js';
import { nextRandom } from './random.js';
import type { MemberConfig, ReplSetConfig } from './repl_set_config.js';
import { ReplInvariants } from './repl_invariants_test_util.js';
import type { ReplTestingKnobs } from './repl_testing_knobs.js';
import { nextWakeMs, startUp, topologyStep, type ReplEvent, type ReplStep } from './topology_coordinator.js';
import type { StartElectionReason, TopologyState } from './topology_state.js';

// A seeded explorer of the protocol core: members are topologyStep and nothing else, joined by an
// in-memory message bus that delays, drops, duplicates, reorders and partitions; members' clocks
// are skewed and jump forward; members crash (keeping only what their persist effects wrote) and
// restart; a member's capped oplog drops its entries before the commit point, so that a member
// left behind finds no source reaching back to it and resyncs (its oplog emptied, then fetched
// from a source's start, as initial sync leaves it); clients write to whoever answers. The invariants are checked after every step.
// Everything random comes from the seed, so a failing seed replays.
export interface ExplorerOptions {
  readonly seed: number;
  // Virtual time with faults, then time with none, in which the set must commit writes again.
  readonly faultyMs?: number;
  readonly healedMs?: number;
  readonly knobs?: ReplTestingKnobs;
  readonly trace?: boolean;
  // The usual delay of a message, in ms (one in ten takes up to 3 s); 1 to 40 unless given.
  readonly messageDelayMs?: readonly [number, number];
}

export interface ExplorerResult {
  readonly seed: number;
  readonly violations: readonly string[];
  readonly trace: readonly string[];
  readonly steps: number;
  readonly primaries: number;
  readonly rollbacks: number;
  readonly resyncs: number;
  readonly elections: Readonly<Record<StartElectionReason, number>>;
  readonly committedWhenHealed: number;
  readonly committedAtEnd: number;
  readonly writesAccepted: number;
}

interface Disk {
  lastVote: LastVote | null;
  oplog: OplogEntry[];
}

interface Node {
  state: TopologyState | null;
  readonly disk: Disk;
  restartAtMs: number | null;
}

interface Envelope {
  readonly atMs: number;
  readonly seq: number;
  readonly from: number;
  readonly to: number;
  readonly message: ReplMessage;
}

const INITIATE: OplogEntry = { ts: 1, t: 0, op: 'n', o: { msg: 'initiating set' } };
const MAX_STEPS = 200_000;
const TRACE_LINES = 1000;

class Rng {
  constructor(private state: number) {}
  next(): number {
    const r = nextRandom(this.state);
    this.state = r.state;
    return r.value;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

function member(i: number, over: Partial<MemberConfig> = {}): MemberConfig {
  return { _id: i, host: `m${i}:27017`, priority: 1, votes: 1, arbiterOnly: false, hidden: false, ...over };
}

// Three or five members; some seeds give one member a higher priority, make one priority 0 or an
// arbiter, or start one with an empty oplog.
function makeConfig(rng: Rng): ReplSetConfig {
  const n = rng.chance(0.5) ? 3 : 5;
  const members = Array.from({ length: n }, (_, i) => member(i));
  const shape = rng.int(0, 3);
  if (shape === 1) members[0] = member(0, { priority: 2 });
  if (shape === 2) members[n - 1] = member(n - 1, { priority: 0 });
  if (shape === 3 && n === 5) members[n - 1] = member(n - 1, { priority: 0, arbiterOnly: true });
  // MongoDB's unbounded catch-up in some seeds, where a catch-up takeover can happen.
  return rng.chance(0.25) ? { _id: 'rs0', version: 1, members, settings: { catchUpTimeoutMillis: -1 } } : { _id: 'rs0', version: 1, members };
}

export function exploreReplicaSet(options: ExplorerOptions): ExplorerResult {
  const rng = new Rng(options.seed);
  const faultyMs = options.faultyMs ?? 120_000;
  const endMs = faultyMs + (options.healedMs ?? 60_000);
  const config = makeConfig(rng);
  const [minDelayMs, maxDelayMs] = options.messageDelayMs ?? [1, 40];
  const invariants = new ReplInvariants();
  const trace: string[] = [];
  const log = (line: string): void => {
    if (!options.trace) return;
    trace.push(line);
    if (trace.length > TRACE_LINES) trace.shift();
  };
  const emptyMember = rng.chance(0.3) ? config.members.length - 1 : -1;
  const nodes: Node[] = config.members.map((_, i) => ({
    state: null,
    disk: { lastVote: null, oplog: config.members[i]!.arbiterOnly || i === emptyMember ? [] : [INITIATE] },
    restartAtMs: 0,
  }));
  let group = config.members.map(() => 0);
  // Each member's clock runs ahead of the explorer's by its own offset, which a fault can jump
  // forward (a member's clock never goes back: the core keeps the largest time it was given).
  const offsetMs = config.members.map(() => rng.int(0, 2000));
  const clock = (i: number): number => nowMs + offsetMs[i]!;
  let queue: Envelope[] = [];
  let seq = 0;
  let nowMs = 0;
  let steps = 0;
  let primaries = 0;
  let rollbacks = 0;
  let resyncs = 0;
  const resyncing = new Set<number>();
  const elections: Record<StartElectionReason, number> = { electionTimeout: 0, priorityTakeover: 0, catchupTakeover: 0, stepUpRequest: 0 };
  let writes = 0;
  let writesAccepted = 0;
  let committedWhenHealed = -1;
  let nextFaultAtMs = rng.int(1000, 8000);
  let nextWriteAtMs = rng.int(100, 600);

  const apply = (i: number, before: TopologyState | null, step: ReplStep, what: string): void => {
    const node = nodes[i]!;
    for (const e of step.effects) runEffect(i, e);
    invariants.observe(i, before, step.state, step.effects, `seed ${options.seed} t=${nowMs} ${what}`);
    node.state = step.state;
    const onDisk = node.disk.oplog.at(-1);
    const inMemory = step.state.oplog.at(-1);
    const sameOplog = node.disk.oplog.length === step.state.oplog.length && onDisk?.ts === inMemory?.ts && onDisk?.t === inMemory?.t;
    if (!sameOplog || (node.disk.lastVote ?? NO_VOTE) !== step.state.lastVote) {
      invariants.violations.push(`seed ${options.seed} t=${nowMs} ${what}: member ${i}: its state holds what its persist effects did not write`);
    }
  };
  const runEffect = (from: number, e: ReplEffect): void => {
    const disk = nodes[from]!.disk;
    if (e.type === 'persistLastVote') disk.lastVote = e.lastVote;
    else if (e.type === 'appendOplog') disk.oplog.push(...e.entries);
    else if (e.type === 'truncateOplogAfter') {
      log(`t=${nowMs} m${from} truncates after ${e.opTime.ts}:${e.opTime.t}`);
      rollbacks++;
      disk.oplog = disk.oplog.filter((x) => compareOpTime({ ts: x.ts, t: x.t }, e.opTime) <= 0);
    }
    else if (e.type === 'memberStateChanged') {
      log(`t=${nowMs} m${from} -> ${e.state}${e.writable ? ' (writable)' : ''} term ${e.term}`);
      if (e.state === 'PRIMARY' && !e.writable) primaries++;
    } else if (e.type === 'commitPointAdvanced') log(`t=${nowMs} m${from} commit point ${e.opTime.ts}:${e.opTime.t}`);
    else if (e.type === 'writeAccepted') writesAccepted++;
    else if (e.type === 'resyncNeeded') {
      log(`t=${nowMs} m${from} resyncs: ${e.reason}`);
      resyncing.add(from);
    }
    else if (e.type === 'send') send(from, e.to, e.message);
  };
  const send = (from: number, to: number, message: ReplMessage): void => {
    if (group[from] !== group[to] || rng.chance(0.03)) return;
    const copies = rng.chance(0.02) ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      const delayMs = rng.chance(0.1) ? rng.int(50, 3000) : rng.int(minDelayMs, maxDelayMs);
      queue.push({ atMs: nowMs + delayMs, seq: seq++, from, to, message });
    }
  };
  const stepNode = (i: number, event: ReplEvent, what: string): void => {
    const before = nodes[i]!.state!;
    const step = topologyStep(before, event);
    if (before.role !== 'candidate' && step.state.election !== null) elections[step.state.election.reason]++;
    apply(i, before, step, what);
    if (resyncing.delete(i)) {
      resyncs++;
      const node = nodes[i]!;
      node.state = null;
      node.disk.oplog = [];
      node.restartAtMs = nowMs + 1;
    }
  };
  const capOplog = (i: number): void => {
    const before = nodes[i]!.state!;
    const step = topologyStep(before, { type: 'trimOplog', nowMs: clock(i) });
    nodes[i]!.disk.oplog = [...step.state.oplog];
    log(`t=${nowMs} m${i}'s oplog is capped to ${step.state.oplog.length} entries`);
    apply(i, before, step, `m${i} oplog capped`);
  };
  const restart = (i: number): void => {
    const node = nodes[i]!;
    node.restartAtMs = null;
    log(`t=${nowMs} m${i} starts`);
    const step = startUp({ config, selfIndex: i, lastVote: node.disk.lastVote, oplog: [...node.disk.oplog], nowMs: clock(i), seed: rng.int(0, 2 ** 31), knobs: options.knobs });
    apply(i, null, step, `m${i} start`);
  };
  const fault = (): void => {
    const roll = rng.next();
    const live = nodes.map((n, i) => (n.state === null ? -1 : i)).filter((i) => i >= 0);
    if (roll < 0.35 && live.length > 0) {
      const i = live[rng.int(0, live.length - 1)]!;
      nodes[i]!.state = null;
      nodes[i]!.restartAtMs = nowMs + rng.int(500, 15_000);
      log(`t=${nowMs} m${i} crashes`);
    } else if (roll < 0.45) {
      const i = rng.int(0, nodes.length - 1);
      offsetMs[i] = offsetMs[i]! + rng.int(1000, 30_000);
      log(`t=${nowMs} m${i}'s clock jumps to +${offsetMs[i]} ms`);
    } else if (roll < 0.75) {
      group = config.members.map(() => rng.int(0, 1));
      log(`t=${nowMs} partition ${group.join('')}`);
    } else if (roll < 0.85 && live.length > 0) {
      capOplog(live[rng.int(0, live.length - 1)]!);
    } else {
      group = config.members.map(() => 0);
      log(`t=${nowMs} heal`);
    }
  };
  const write = (): void => {
    const live = nodes.map((n, i) => (n.state === null ? -1 : i)).filter((i) => i >= 0);
    if (live.length === 0) return;
    const writable = live.filter((i) => nodes[i]!.state!.leader?.writable === true);
    const target = writable.length > 0 && rng.chance(0.8) ? writable[rng.int(0, writable.length - 1)]! : live[rng.int(0, live.length - 1)]!;
    stepNode(target, { type: 'clientWrite', nowMs: clock(target), o: { w: writes++ } }, `m${target} write`);
  };

  while (nowMs <= endMs && steps < MAX_STEPS && invariants.violations.length === 0) {
    steps++;
    if (committedWhenHealed < 0 && nowMs >= faultyMs) {
      committedWhenHealed = invariants.committedCount();
      group = config.members.map(() => 0);
      for (const n of nodes) if (n.state === null) n.restartAtMs = nowMs;
      log(`t=${nowMs} healed for good`);
    }
    let best = Number.POSITIVE_INFINITY;
    let action: () => void = () => undefined;
    const consider = (at: number, run: () => void): void => {
      if (at < best) {
        best = at;
        action = run;
      }
    };
    const msg = queue.reduce<Envelope | null>((a, m) => (a === null || m.atMs < a.atMs || (m.atMs === a.atMs && m.seq < a.seq) ? m : a), null);
    if (msg !== null) {
      consider(msg.atMs, () => {
        queue = queue.filter((m) => m !== msg);
        const to = nodes[msg.to]!;
        if (to.state === null || group[msg.from] !== group[msg.to]) return;
        log(`t=${nowMs} m${msg.to} <- m${msg.from} ${msg.message.kind}`);
        stepNode(msg.to, { type: 'receive', nowMs: clock(msg.to), from: msg.from, message: msg.message }, `m${msg.to} receives ${msg.message.kind} from m${msg.from}`);
      });
    }
    nodes.forEach((n, i) => {
      if (n.state !== null) consider(Math.max(nowMs, nextWakeMs(n.state) - offsetMs[i]!), () => stepNode(i, { type: 'tick', nowMs: clock(i) }, `m${i} tick`));
      else if (n.restartAtMs !== null) consider(n.restartAtMs, () => restart(i));
    });
    if (nowMs < faultyMs) consider(nextFaultAtMs, () => {
      fault();
      nextFaultAtMs = nowMs + rng.int(1000, 8000);
    });
    consider(nextWriteAtMs, () => {
      write();
      nextWriteAtMs = nowMs + rng.int(100, 600);
    });
    nowMs = Math.max(nowMs, best);
    action();
  }
  return {
    seed: options.seed,
    violations: invariants.violations,
    trace,
    steps,
    primaries,
    rollbacks,
    resyncs,
    elections,
    committedWhenHealed,
    committedAtEnd: invariants.committedCount(),
    writesAccepted,
  };
}
