import type { Clock } from '../base/clock.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Network } from '../wire/network.js';
import { parseConnectionString } from './connection_string.js';
import { RemoteCommandTargeter } from './remote_command_targeter.js';
import { DEFAULT_MONITOR_SETTINGS, ReplicaSetMonitor, type MonitorSettings } from './replica_set_monitor.js';

// MongoDB's ReplicaSetMonitorManager: one monitor per set name, made the first time a host string
// names the set; a later string with other seeds adds them. The targeter of each string is kept,
// so a request pays one map lookup, not a parse.
export class ReplicaSetMonitors {
  private readonly monitors = new Map<string, ReplicaSetMonitor>();
  private readonly targeters = new Map<string, RemoteCommandTargeter>();
  private closed = false;

  constructor(
    private readonly network: Network,
    private readonly clock: Clock,
    private readonly settings: MonitorSettings = DEFAULT_MONITOR_SETTINGS,
  ) {}

  targeterFor(connectionString: string): RemoteCommandTargeter {
    const known = this.targeters.get(connectionString);
    if (known !== undefined) return known;
    if (this.closed) throw new MongoError(ErrorCodes.ShutdownInProgress, 'replica set monitors are shut down');
    const { setName, hosts } = parseConnectionString(connectionString);
    if (setName === undefined) throw new MongoError(ErrorCodes.FailedToParse, `"${connectionString}" names no replica set`);
    let monitor = this.monitors.get(setName);
    if (monitor === undefined) {
      monitor = new ReplicaSetMonitor(setName, hosts, this.network, this.clock, this.settings);
      this.monitors.set(setName, monitor);
    } else {
      monitor.addSeeds(hosts);
    }
    const targeter = new RemoteCommandTargeter(monitor);
    this.targeters.set(connectionString, targeter);
    return targeter;
  }

  // The monitor of the set `connectionString` names, made if none is yet.
  monitorFor(connectionString: string): ReplicaSetMonitor {
    this.targeterFor(connectionString);
    return this.monitors.get(parseConnectionString(connectionString).setName!)!;
  }

  // The monitors of every set this process has talked to.
  all(): ReplicaSetMonitor[] {
    return [...this.monitors.values()];
  }

  close(): void {
    this.closed = true;
    for (const m of this.monitors.values()) m.stop();
  }
}
