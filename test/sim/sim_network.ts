import { MongoError } from '../../src/base/errors.js';
import { ErrorCodes } from '../../src/base/error_codes.js';
import { deserializeDocument, serializeDocument } from '../../src/bson/values.js';
import type { CommandOptions } from '../../src/wire/client.js';
import type { Network } from '../../src/wire/network.js';
import type { Incarnation, Scheduler } from './scheduler.js';

// What a simulated node does with a command it receives: its reply, as bytes (an error is a reply
// with ok: 0, as on the wire).
export type CommandHandler = (db: string, body: Buffer) => Promise<Buffer>;

// What becomes of one message: delivered in its turn, lost, or held back until nothing else can
// happen (a message stuck in the network; it arrives even if its sender has crashed since).
export type Fate = 'deliver' | 'drop' | 'delay';

// The fate of each request, and of each reply, by command name.
export interface NetworkFaults {
  request?(command: string): Fate;
  reply?(command: string): Fate;
}

interface Request {
  readonly from: Incarnation;
  // The incarnation listening when the request was sent: a restarted node has new connections.
  readonly to: Incarnation | undefined;
  readonly host: string;
  readonly db: string;
  readonly command: string;
  readonly body: Buffer;
  done: boolean;
  finish(reply: Buffer | MongoError): void;
}

interface Endpoint {
  readonly owner: Incarnation;
  readonly handler: CommandHandler;
  // Requests it is handling: a crash breaks their connections.
  readonly handling: Set<Request>;
}

// The nodes' network under the scheduler: every request and every reply is a step of its own. A
// crashed node's connections break: what it was handling fails at once at the sender
// (SocketException), what is sent to it fails (HostUnreachable); its own requests and the replies
// due to it vanish with its other steps. A request with timeoutMs fails with NetworkTimeout when
// its reply has not come in time, as WireClient's do.
export class SimNetwork {
  private readonly endpoints = new Map<string, Endpoint>();

  constructor(private readonly scheduler: Scheduler, private readonly faults: NetworkFaults = {}) {}

  listen(host: string, owner: Incarnation, handler: CommandHandler): void {
    this.endpoints.set(host, { owner, handler, handling: new Set() });
  }

  // `owner` crashed: the requests it was handling fail at their senders.
  crashed(owner: Incarnation): void {
    for (const endpoint of this.endpoints.values()) {
      if (endpoint.owner !== owner) continue;
      for (const request of endpoint.handling) {
        this.replyStep(request, new MongoError(ErrorCodes.SocketException, `connection to ${request.host} closed`));
      }
      endpoint.handling.clear();
    }
  }

  clientOf(owner: Incarnation): Network {
    const commandRaw = (host: string, db: string, body: Buffer, options: CommandOptions = {}): Promise<Buffer> => new Promise((resolve, reject) => {
      const command = Object.keys(deserializeDocument(body))[0] ?? '';
      const timer = options.timeoutMs === undefined ? undefined : this.scheduler.setTimer(owner, options.timeoutMs, () => {
        request.finish(new MongoError(ErrorCodes.NetworkTimeout, `${host}: command on ${db} timed out after ${options.timeoutMs}ms`));
      });
      const request: Request = {
        from: owner, to: this.endpoints.get(host)?.owner, host, db, command, body, done: false,
        finish(reply) {
          if (request.done) return;
          request.done = true;
          timer?.cancel();
          if (reply instanceof MongoError) reject(reply);
          else resolve(reply);
        },
      };
      const fate = this.faults.request?.(command) ?? 'deliver';
      const label = `${owner.name} → ${host} ${command}`;
      if (fate === 'deliver') this.scheduler.post(owner, label, () => this.deliver(request));
      else if (fate === 'delay') this.scheduler.whenIdle(`${label} (held back)`, () => this.deliver(request));
    });
    return {
      commandRaw,
      command: async (host, db, cmd, options) => deserializeDocument(await commandRaw(host, db, serializeDocument({ ...cmd, $db: db }), options)),
    };
  }

  private deliver(request: Request): void {
    const endpoint = this.endpoints.get(request.host);
    if (endpoint === undefined || request.to !== endpoint.owner || !endpoint.owner.alive) {
      this.replyStep(request, new MongoError(ErrorCodes.HostUnreachable, `${request.host} is unreachable`));
      return;
    }
    endpoint.handling.add(request);
    void endpoint.handler(request.db, request.body).then((reply) => {
      if (endpoint.handling.delete(request)) this.replyStep(request, reply, this.faults.reply?.(request.command));
    });
  }

  private replyStep(request: Request, reply: Buffer | MongoError, fate: Fate = 'deliver'): void {
    const label = `${request.host} → ${request.from.name} ${request.command} ${reply instanceof MongoError ? reply.codeName : 'reply'}`;
    if (fate === 'deliver') this.scheduler.post(request.from, label, () => request.finish(reply));
    else if (fate === 'delay') this.scheduler.whenIdle(`${label} (held back)`, () => { if (request.from.alive) request.finish(reply); });
  }
}
