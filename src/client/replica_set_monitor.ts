import type { Clock, Timer } from '../base/clock.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { Network } from '../wire/network.js';
import { readPreferenceDocument, type ReadPreference } from './read_preference.js';
import { readTopologyVersion, type ServerDescription } from './server_description.js';
import { selectServers } from './server_selection.js';
import { SetTopology } from './set_topology.js';

export interface MonitorSettings {
  // A member that cannot stream is asked this often; so is each member's round trip measured.
  heartbeatFrequencyMs: number;
  // A streaming hello waits this long on the member for its topology to change.
  maxAwaitTimeMs: number;
  connectTimeoutMs: number;
}

// MongoDB's defaults: a heartbeat every 10 s, a streamed hello held as long, and checks that a
// caller asked for at most every 500 ms (the spec's minHeartbeatFrequencyMS).
export const DEFAULT_MONITOR_SETTINGS: MonitorSettings = { heartbeatFrequencyMs: 10_000, maxAwaitTimeMs: 10_000, connectTimeoutMs: 10_000 };
const MIN_HEARTBEAT_FREQUENCY_MS = 500;

// MongoDB's (streamable) ReplicaSetMonitor: the set's view (set_topology.ts) kept current by a
// loop per member that streams hello (the awaitable form: the member answers when its role changes
// or after maxAwaitTimeMs) on the monitor's own network, whose connections serve nothing else, and
// a second loop per member that times a plain hello every heartbeat. A caller's error marks a
// member at once and checks every member now, so that the new primary is found as soon as it
// says so.
export class ReplicaSetMonitor {
  private readonly topology: SetTopology;
  private readonly members = new Map<string, MemberMonitor>();
  private readonly changeListeners = new Set<() => void>();
  private readonly confirmedSetListeners = new Set<(hosts: readonly string[]) => void>();
  // The members (hosts and passives, as config.shards.host lists them) its primary last reported.
  private confirmedHosts: readonly string[] | undefined;
  private stopped = false;

  constructor(
    readonly setName: string,
    seeds: readonly string[],
    private readonly network: Network,
    private readonly clock: Clock,
    readonly settings: MonitorSettings = DEFAULT_MONITOR_SETTINGS,
  ) {
    this.topology = new SetTopology(setName, seeds, clock.now());
    this.syncMembers();
  }

  addSeeds(hosts: readonly string[]): void {
    this.topology.addSeeds(hosts, this.clock.now());
    this.syncMembers();
  }

  // The set's members as last seen.
  view(): ServerDescription[] {
    return this.topology.descriptions();
  }

  // A member that serves `rp` now, or undefined.
  selectHost(rp: ReadPreference): string | undefined {
    const eligible = selectServers(this.topology.descriptions(), rp, this.settings);
    if (eligible.length === 0) return undefined;
    return eligible[eligible.length === 1 ? 0 : Math.floor(Math.random() * eligible.length)]!.address;
  }

  // A member that serves `rp`, waiting up to `timeoutMs` for one to appear (checks are asked for
  // meanwhile); then FailedToSatisfyReadPreference, as MongoDB's targeter fails.
  async findHost(rp: ReadPreference, timeoutMs: number): Promise<string> {
    const deadline = this.clock.now() + timeoutMs;
    for (;;) {
      if (this.stopped) throw shutdown();
      const host = this.selectHost(rp);
      if (host !== undefined) return host;
      const left = deadline - this.clock.now();
      if (left <= 0) {
        throw new MongoError(ErrorCodes.FailedToSatisfyReadPreference, `Could not find host matching read preference ${JSON.stringify(readPreferenceDocument(rp))} for set ${this.setName}`);
      }
      this.requestCheck();
      await this.nextChange(left);
    }
  }

  // A command's not-primary error from `address` (its topologyVersion, when the error had one).
  markHostNotPrimary(address: string, topologyVersion?: unknown): void {
    if (!this.topology.markNotPrimary(address, this.clock.now(), readTopologyVersion(topologyVersion))) return;
    this.changed();
    this.requestCheck();
  }

  markHostUnreachable(address: string, error: string): void {
    if (!this.topology.markUnreachable(address, this.clock.now(), error)) return;
    this.changed();
    this.requestCheck();
  }

  // Every member's loop that waits for its next heartbeat checks now (or 500 ms after its last check).
  requestCheck(): void {
    for (const m of this.members.values()) m.wake();
  }

  stop(): void {
    this.stopped = true;
    for (const m of this.members.values()) m.stop();
    this.members.clear();
    this.changed();
  }

  // MongoDB's ReplicaSetChangeNotifier's onConfirmedSet: `listener` hears the set's members each
  // time a primary reports a list other than the last one (and the current list at once, when one
  // is known). Returns what unsubscribes it.
  onConfirmedSet(listener: (hosts: readonly string[]) => void): () => void {
    this.confirmedSetListeners.add(listener);
    if (this.confirmedHosts !== undefined) listener(this.confirmedHosts);
    return () => this.confirmedSetListeners.delete(listener);
  }

  onReply(address: string, reply: Doc, rttMs: number | undefined): void {
    if (this.stopped) return;
    this.topology.onHello(address, reply, this.clock.now(), rttMs);
    this.syncMembers();
    this.confirmFromPrimary(address);
    this.changed();
  }

  onRtt(address: string, rttMs: number): void {
    this.topology.onRtt(address, rttMs);
  }

  onCheckFailed(address: string, err: unknown): void {
    if (this.stopped) return;
    this.topology.onCheckFailed(address, this.clock.now(), err instanceof Error ? err.message : String(err));
    this.changed();
  }

  private confirmFromPrimary(address: string): void {
    const primary = this.topology.primary();
    if (primary?.address !== address) return;
    const hosts = [...primary.hosts, ...primary.passives];
    if (this.confirmedHosts !== undefined && hosts.length === this.confirmedHosts.length && hosts.every((h, i) => h === this.confirmedHosts![i])) return;
    this.confirmedHosts = hosts;
    for (const listener of [...this.confirmedSetListeners]) listener(hosts);
  }

  private nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: Timer | undefined;
      const done = (): void => {
        timer?.cancel();
        this.changeListeners.delete(done);
        resolve();
      };
      this.changeListeners.add(done);
      timer = this.clock.setTimer(ms, done);
    });
  }

  private changed(): void {
    for (const listener of [...this.changeListeners]) listener();
  }

  // A loop for every member the view holds, none for one it dropped.
  private syncMembers(): void {
    if (this.stopped) return;
    const addresses = new Set(this.topology.addresses());
    for (const [address, m] of this.members) {
      if (!addresses.has(address)) {
        m.stop();
        this.members.delete(address);
      }
    }
    for (const address of addresses) {
      if (!this.members.has(address)) {
        const m = new MemberMonitor(address, this, this.network, this.clock);
        this.members.set(address, m);
        m.start();
      }
    }
  }
}

// The checks of one member: streaming hello while the member gives a topologyVersion, a plain
// hello every heartbeat otherwise (or after a failure); and its round-trip pings.
class MemberMonitor {
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private rttTimer: Timer | undefined;
  // A streaming hello is on the member now (a plain check in flight answers soon anyway).
  private streamingHeld = false;
  private besideInFlight = false;
  private besideAgain = false;
  private besideTimer: Timer | undefined;
  private lastBeside = -Infinity;

  constructor(
    private readonly address: string,
    private readonly monitor: ReplicaSetMonitor,
    private readonly network: Network,
    private readonly clock: Clock,
  ) {}

  start(): void {
    void this.checkLoop();
    this.rttTimer = this.clock.setRepeatingTimer(this.monitor.settings.heartbeatFrequencyMs, () => void this.ping(), { unref: true });
  }

  stop(): void {
    this.stopped = true;
    this.rttTimer?.cancel();
    this.besideTimer?.cancel();
    this.wake();
  }

  // A check now: the waiting loop goes at once; while a streaming hello is held on the member
  // (it answers only on news, which a member wrongly marked has none of), a plain one is sent
  // beside it, one at a time and at most every 500 ms (a request within that waits for its turn).
  wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = undefined;
    if (wake !== undefined) wake();
    else if (this.stopped || !this.streamingHeld || this.besideTimer !== undefined) return;
    else if (this.besideInFlight) this.besideAgain = true;
    else {
      const wait = this.lastBeside + MIN_HEARTBEAT_FREQUENCY_MS - this.clock.now();
      if (wait <= 0) void this.checkBeside();
      else {
        this.besideTimer = this.clock.setTimer(wait, () => {
          this.besideTimer = undefined;
          void this.checkBeside();
        }, { unref: true });
      }
    }
  }

  private async checkBeside(): Promise<void> {
    if (this.stopped) return;
    this.besideInFlight = true;
    const started = this.clock.now();
    this.lastBeside = started;
    try {
      const reply = await this.network.command(this.address, 'admin', { hello: 1 }, { timeoutMs: this.monitor.settings.connectTimeoutMs });
      if (!this.stopped) this.monitor.onReply(this.address, reply, this.clock.now() - started);
    } catch (err) {
      if (!this.stopped) this.monitor.onCheckFailed(this.address, err);
    } finally {
      this.besideInFlight = false;
    }
    if (this.besideAgain) {
      this.besideAgain = false;
      this.wake();
    }
  }

  private async checkLoop(): Promise<void> {
    const { heartbeatFrequencyMs, maxAwaitTimeMs, connectTimeoutMs } = this.monitor.settings;
    let topologyVersion: unknown;
    while (!this.stopped) {
      const started = this.clock.now();
      const streaming = topologyVersion !== undefined;
      const sent = topologyVersion;
      const cmd: Doc = streaming ? { hello: 1, topologyVersion, maxAwaitTimeMS: maxAwaitTimeMs } : { hello: 1 };
      this.streamingHeld = streaming;
      try {
        const reply = await this.network.command(this.address, 'admin', cmd, { timeoutMs: connectTimeoutMs + (streaming ? maxAwaitTimeMs : 0) });
        this.streamingHeld = false;
        if (this.stopped) return;
        this.monitor.onReply(this.address, reply, streaming ? undefined : this.clock.now() - started);
        topologyVersion = reply.ok === 1 ? reply.topologyVersion : undefined;
      } catch (err) {
        this.streamingHeld = false;
        if (this.stopped) return;
        this.monitor.onCheckFailed(this.address, err);
        topologyVersion = undefined;
      }
      // A streaming member answers when there is news: ask again at once. One that answers early
      // with no news does not hold awaitable hellos, and is asked no more often than a woken check.
      const early = this.clock.now() - started < maxAwaitTimeMs / 2;
      if (topologyVersion !== undefined && !(streaming && early && sameTopologyVersion(sent, topologyVersion))) continue;
      await this.pause(started, topologyVersion === undefined ? heartbeatFrequencyMs : MIN_HEARTBEAT_FREQUENCY_MS);
    }
  }

  // Until the next heartbeat, or a wake-up but not sooner than 500 ms after the last check began.
  private async pause(started: number, heartbeatFrequencyMs: number): Promise<void> {
    const woken = await new Promise<boolean>((resolve) => {
      const timer = this.clock.setTimer(heartbeatFrequencyMs - (this.clock.now() - started), () => {
        this.wakeUp = undefined;
        resolve(false);
      }, { unref: true });
      this.wakeUp = () => {
        timer.cancel();
        resolve(true);
      };
    });
    const early = MIN_HEARTBEAT_FREQUENCY_MS - (this.clock.now() - started);
    if (woken && early > 0 && !this.stopped) await this.clock.sleep(early, { unref: true });
  }

  private async ping(): Promise<void> {
    const started = this.clock.now();
    try {
      const reply = await this.network.command(this.address, 'admin', { hello: 1 }, { timeoutMs: this.monitor.settings.connectTimeoutMs });
      if (!this.stopped && reply.ok === 1) this.monitor.onRtt(this.address, this.clock.now() - started);
    } catch {
      // The check loop reports what is wrong with the member; a ping only times it.
    }
  }
}

function sameTopologyVersion(a: unknown, b: unknown): boolean {
  const x = readTopologyVersion(a);
  const y = readTopologyVersion(b);
  return x !== undefined && y !== undefined && x.processId === y.processId && x.counter === y.counter;
}

function shutdown(): MongoError {
  return new MongoError(ErrorCodes.ShutdownInProgress, 'replica set monitor is shut down');
}
