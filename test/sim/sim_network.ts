import { MongoError } from '../../src/base/errors.js';
import { ErrorCodes } from '../../src/base/error_codes.js';
import { deserializeDocument, serializeDocument, type Doc } from '../../src/bson/values.js';
import { opMsgReplyOfBody } from '../../src/command_layer/message_handler.js';
import { withElement, withoutClusterTime, type CommandOptions } from '../../src/wire/client.js';
import { encodeOpMsgRequest, finishOpMsgReply, OP_MSG_REPLY_PREFIX } from '../../src/wire/message.js';
import type { ClusterTimeGossip, Network, OpenListener } from '../../src/wire/network.js';
import type { Connection, ServerHandlers } from '../../src/wire/tcp_server.js';
import { Incarnation, type Scheduler } from './scheduler.js';

// What a simulated node does with a command it receives: its reply, as bytes (an error is a reply
// with ok: 0, as on the wire).
export type CommandHandler = (db: string, body: Buffer) => Promise<Buffer>;

// What becomes of one message: delivered in its turn; lost without a trace (only a timeout tells
// the sender); held back until nothing else can happen (a message stuck in the network; it arrives
// even if its sender has crashed since); or its connection breaks (a request never arrives and
// its sender sees HostUnreachable; a reply is lost after the receiver acted and its sender sees
// SocketException).
export type Fate = 'deliver' | 'drop' | 'delay' | 'reset';

// The fate of each request, and of each reply, by command name, sender and receiving host.
export interface NetworkFaults {
  request?(command: string, from: string, host: string, body: Doc): Fate;
  reply?(command: string, from: string, host: string): Fate;
  // How long a message takes on the wire (none: it is ready at once).
  latencyMs?(): number;
}

interface Request {
  readonly from: Incarnation;
  // The incarnation listening when the request was sent: a restarted node has new connections.
  readonly to: Incarnation | undefined;
  readonly host: string;
  readonly db: string;
  readonly command: string;
  // The whole OP_MSG request.
  readonly message: Buffer;
  done: boolean;
  finish(reply: Buffer | MongoError): void;
}

interface Endpoint {
  readonly owner: Incarnation;
  readonly handlers: ServerHandlers;
  // Requests it is handling: a crash breaks their connections.
  readonly handling: Set<Request>;
}

// The nodes' network under the scheduler: every request and every reply is a step of its own,
// whole OP_MSG messages handed to the receiver's listener as its socket would. Each request comes
// on a connection of its own. A crashed node's connections break: what it was handling fails at
// once at the sender (SocketException), what is sent to it fails (HostUnreachable); its own
// requests and the replies due to it vanish with its other steps. A request with timeoutMs fails
// with NetworkTimeout when its reply has not come in time, as WireClient's do.
export class SimNetwork {
  private readonly endpoints = new Map<string, Endpoint>();
  // Messages on the wire belong to no process: a crash of their sender does not stop them.
  private readonly wire = new Incarnation('network');
  private nextConnectionId = 1;
  private nextRequestId = 1;

  constructor(private readonly scheduler: Scheduler, private readonly faults: NetworkFaults = {}) {}

  // A simulated node's command handler, as a listener on `host`.
  listen(host: string, owner: Incarnation, handler: CommandHandler): void {
    this.endpoints.set(host, {
      owner,
      handling: new Set(),
      handlers: {
        onMessage: async (_conn, message) => {
          const body = message.subarray(OP_MSG_REPLY_PREFIX);
          return opMsgReplyOfBody(await handler(String(deserializeDocument(body).$db ?? ''), body), message.readInt32LE(4));
        },
      },
    });
  }

  // The listening side `owner` opens on `host` (a composition root's listener port).
  listener(host: string, owner: Incarnation): OpenListener {
    return (handlers) => ({
      listen: async () => {
        this.endpoints.set(host, { owner, handlers, handling: new Set() });
        return Number(host.slice(host.lastIndexOf(':') + 1));
      },
      close: async () => {
        if (this.endpoints.get(host)?.owner === owner) this.endpoints.delete(host);
      },
    });
  }

  // `owner` crashed: the requests it was handling fail at their senders.
  crashed(owner: Incarnation): void {
    for (const [host, endpoint] of this.endpoints) {
      if (endpoint.owner !== owner) continue;
      for (const request of endpoint.handling) {
        this.replyStep(request, new MongoError(ErrorCodes.SocketException, `connection to ${request.host} closed`));
      }
      endpoint.handling.clear();
      this.endpoints.delete(host);
    }
  }

  // `owner`'s connections to the others; with `gossip`, its cluster time rides on every request
  // and every reply's moves it, as on a WireClient.
  clientOf(owner: Incarnation, gossip?: ClusterTimeGossip): Network {
    let closed = false;
    const send = (host: string, db: string, message: Buffer, body: Doc, options: CommandOptions = {}): Promise<Buffer> => new Promise<Buffer>((resolve, reject) => {
      const command = Object.keys(body)[0] ?? '';
      if (closed) {
        reject(new MongoError(ErrorCodes.ShutdownInProgress, 'wire client is closed'));
        return;
      }
      const timer = options.timeoutMs === undefined ? undefined : this.scheduler.setTimer(owner, options.timeoutMs, () => {
        request.finish(new MongoError(ErrorCodes.NetworkTimeout, `${host}: command on ${db} timed out after ${options.timeoutMs}ms`));
      });
      const request: Request = {
        from: owner, to: this.endpoints.get(host)?.owner, host, db, command, message, done: false,
        finish(reply) {
          if (request.done) return;
          request.done = true;
          timer?.cancel();
          if (reply instanceof MongoError) reject(reply);
          else resolve(reply);
        },
      };
      const fate = this.faults.request?.(command, owner.name, host, body) ?? 'deliver';
      const label = `${owner.name} → ${host} ${command}`;
      if (fate === 'deliver') this.travel(owner, label, () => this.deliver(request));
      else if (fate === 'delay') this.scheduler.whenIdle(`${label} (held back)`, () => this.deliver(request));
      else if (fate === 'reset') this.replyStep(request, new MongoError(ErrorCodes.HostUnreachable, `${host} is unreachable`));
    }).then((reply) => {
      gossip?.receive(reply);
      return reply;
    });
    const commandRaw = (host: string, db: string, body: Buffer, options?: CommandOptions): Promise<Buffer> => {
      return send(host, db, encodeOpMsgRequest(gossip === undefined ? body : withElement(body, gossip.element()), this.nextRequestId++), deserializeDocument(body), options);
    };
    return {
      commandRaw,
      command: async (host, db, cmd, options) => {
        const own = gossip !== undefined && '$clusterTime' in cmd ? withoutClusterTime(cmd) : cmd;
        return deserializeDocument(await commandRaw(host, db, serializeDocument({ ...own, $db: db }), options));
      },
      forwardMessage: (host, message) => {
        finishOpMsgReply(message, this.nextRequestId++, 0);
        const body = deserializeDocument(message.subarray(OP_MSG_REPLY_PREFIX, OP_MSG_REPLY_PREFIX + message.readInt32LE(OP_MSG_REPLY_PREFIX)));
        return send(host, String(body.$db ?? ''), message, body);
      },
      close: async () => {
        closed = true;
      },
    };
  }

  // A message on its way: ready at once, or after the wire's latency.
  private travel(sender: Incarnation, label: string, arrive: () => void): void {
    const latency = this.faults.latencyMs?.() ?? 0;
    if (latency <= 0) this.scheduler.post(sender, label, arrive);
    else this.scheduler.setTimer(this.wire, latency, () => this.scheduler.post(undefined, label, arrive));
  }

  private deliver(request: Request): void {
    const endpoint = this.endpoints.get(request.host);
    if (endpoint === undefined || request.to !== endpoint.owner || !endpoint.owner.alive) {
      this.replyStep(request, new MongoError(ErrorCodes.HostUnreachable, `${request.host} is unreachable`));
      return;
    }
    endpoint.handling.add(request);
    const conn: Connection = {
      id: this.nextConnectionId++,
      remote: request.from.name,
      local: request.host,
      close: () => {
        if (endpoint.handling.delete(request)) this.replyStep(request, new MongoError(ErrorCodes.SocketException, `connection to ${request.host} closed`));
      },
    };
    endpoint.handlers.onConnect?.(conn);
    void Promise.resolve()
      .then(() => endpoint.handlers.onMessage(conn, request.message))
      .then((reply) => {
        if (!endpoint.handling.delete(request)) return;
        endpoint.handlers.onClose?.(conn, undefined);
        if (reply === undefined) return;
        this.replyStep(request, reply.subarray(OP_MSG_REPLY_PREFIX), this.faults.reply?.(request.command, request.from.name, request.host));
      }, (err: unknown) => {
        if (endpoint.handling.delete(request)) this.replyStep(request, new MongoError(ErrorCodes.SocketException, `connection to ${request.host} closed: ${String(err)}`));
      });
  }

  private replyStep(request: Request, reply: Buffer | MongoError, fate: Fate = 'deliver'): void {
    const label = `${request.host} → ${request.from.name} ${request.command} ${reply instanceof MongoError ? reply.codeName : 'reply'}`;
    if (fate === 'deliver') this.travel(request.from, label, () => { if (request.from.alive) request.finish(reply); });
    else if (fate === 'delay') this.scheduler.whenIdle(`${label} (held back)`, () => { if (request.from.alive) request.finish(reply); });
    else if (fate === 'reset') this.travel(request.from, `${label} lost, connection reset`, () => request.finish(new MongoError(ErrorCodes.SocketException, `connection to ${request.host} closed`)));
  }
}
