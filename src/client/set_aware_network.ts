import type { Clock } from '../base/clock.js';
import { serializeDocument, type Doc } from '../bson/values.js';
import { withElement, type CommandOptions } from '../wire/client.js';
import { OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import type { Network } from '../wire/network.js';
import { isSetConnectionString } from './connection_string.js';
import { PRIMARY_ONLY, parseReadPreference, readPreferenceDocument, type ReadPreference } from './read_preference.js';
import { readPreferenceIn, replyErrorCode, replyTopologyVersion } from './raw_fields.js';
import { isNetworkFailure, isNotPrimaryReply } from './remote_command_targeter.js';
import { ReplicaSetMonitors } from './replica_set_monitors.js';

// A process's Network that also takes a set's host string (`name/h1:p1,...`, as config.shards.host
// and --configdb hold): the request goes to the member its read preference selects (the primary
// by default; `CommandOptions.readPreference`, or for a forwarded message the `$readPreference`
// its body carries), waiting for one to appear; a not-primary reply or a network failure tells the
// set's monitor at once. A command the process calls idempotent is then sent again, to the member
// the monitor selects next (MongoDB's Shard::RetryPolicy::kIdempotent, up to 3 retries); any other
// the caller retries as it would any other failure. A plain `host:port` goes straight to the
// network underneath.
export class SetAwareNetwork implements Network {
  constructor(
    private readonly direct: Network,
    readonly monitors: ReplicaSetMonitors,
    // The monitors' own connections, closed with this.
    private readonly monitoring: Network,
    private readonly idempotent: (cmd: Doc) => boolean = () => false,
  ) {}

  command(host: string, db: string, cmd: Doc, options?: CommandOptions): Promise<Doc> {
    if (!isSetConnectionString(host)) return this.direct.command(host, db, cmd, options);
    return this.commandOnSet(host, db, cmd, options);
  }

  commandRaw(host: string, db: string, body: Buffer, options?: CommandOptions): Promise<Buffer> {
    if (!isSetConnectionString(host)) return this.direct.commandRaw(host, db, body, options);
    return this.commandRawOnSet(host, db, body, options);
  }

  forwardMessage(host: string, message: Buffer): Promise<Buffer> {
    if (!isSetConnectionString(host)) return this.direct.forwardMessage(host, message);
    return this.forwardToSet(host, message);
  }

  async close(): Promise<void> {
    this.monitors.close();
    await Promise.all([this.direct.close(), this.monitoring.close()]);
  }

  private async commandOnSet(host: string, db: string, cmd: Doc, options: CommandOptions | undefined): Promise<Doc> {
    const targeter = this.monitors.targeterFor(host);
    const rp = optionReadPreference(options, cmd.$readPreference);
    const member = await targeter.findHost(rp, options?.timeoutMs);
    const sent = rp.mode === 'primary' || '$readPreference' in cmd ? cmd : { ...cmd, $readPreference: readPreferenceDocument(rp) };
    const retries = this.idempotent(cmd) ? MAX_IDEMPOTENT_RETRIES : 0;
    for (let attempt = 0, to = member; ; attempt++, to = await targeter.findHost(rp, options?.timeoutMs)) {
      let reply: Doc;
      try {
        reply = await this.direct.command(to, db, sent, options);
      } catch (err) {
        targeter.onError(to, err);
        if (attempt < retries && isNetworkFailure(err)) continue;
        throw err;
      }
      const code = typeof reply.code === 'number' ? reply.code : undefined;
      targeter.onReply(to, code, reply.topologyVersion);
      if (attempt < retries && isNotPrimaryReply(code)) continue;
      return reply;
    }
  }

  private async commandRawOnSet(host: string, db: string, body: Buffer, options: CommandOptions | undefined): Promise<Buffer> {
    const targeter = this.monitors.targeterFor(host);
    const carried = readPreferenceIn(body, 0);
    const rp = optionReadPreference(options, carried);
    const member = await targeter.findHost(rp, options?.timeoutMs);
    const sent = rp.mode === 'primary' || carried !== undefined ? body : withElement(body, readPreferenceElement(rp));
    return this.sendChecked(member, targeter, () => this.direct.commandRaw(member, db, sent, options));
  }

  private async forwardToSet(host: string, message: Buffer): Promise<Buffer> {
    const targeter = this.monitors.targeterFor(host);
    const carried = readPreferenceIn(message, OP_MSG_REPLY_PREFIX);
    const rp = carried === undefined ? PRIMARY_ONLY : parseReadPreference(carried);
    const member = await targeter.findHost(rp);
    return this.sendChecked(member, targeter, () => this.direct.forwardMessage(member, message));
  }

  private async sendChecked(member: string, targeter: ReturnType<ReplicaSetMonitors['targeterFor']>, send: () => Promise<Buffer>): Promise<Buffer> {
    let reply: Buffer;
    try {
      reply = await send();
    } catch (err) {
      targeter.onError(member, err);
      throw err;
    }
    const code = replyErrorCode(reply);
    if (code !== undefined) targeter.onReply(member, code, replyTopologyVersion(reply));
    return reply;
  }
}

// The caller's read preference, else the one the command carries (a router passes its client's
// on), else primary.
function optionReadPreference(options: CommandOptions | undefined, carried: unknown): ReadPreference {
  if (options?.readPreference !== undefined) return parseReadPreference(options.readPreference);
  return carried === undefined ? PRIMARY_ONLY : parseReadPreference(carried);
}

// {$readPreference: ...} as the element bytes a body gets appended.
function readPreferenceElement(rp: ReadPreference): Buffer {
  const doc = serializeDocument({ $readPreference: readPreferenceDocument(rp) });
  return doc.subarray(4, doc.length - 1);
}

// The process's network from its way of opening a WireClient: one for requests, and one with two
// connections per host (a streaming hello, a round-trip ping) for the monitors.
export function openSetAwareNetwork(open: (maxConnectionsPerHost?: number) => Network, clock: Clock, idempotent?: (cmd: Doc) => boolean): SetAwareNetwork {
  const monitoring = open(MONITOR_CONNECTIONS_PER_HOST);
  return new SetAwareNetwork(open(), new ReplicaSetMonitors(monitoring, clock), monitoring, idempotent);
}

const MONITOR_CONNECTIONS_PER_HOST = 2;
const MAX_IDEMPOTENT_RETRIES = 3;
