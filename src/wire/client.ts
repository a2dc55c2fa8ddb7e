import type tls from 'node:tls';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { parseHostAddress } from './client_connection.js';
import { HostPool } from './host_pool.js';
import { encodeOpMsgRequest, finishOpMsgReply } from './message.js';
import type { ClusterTimeGossip, Network } from './network.js';

export interface WireClientOptions {
  connectTimeoutMs?: number;
  maxConnectionsPerHost?: number;
  gossip?: ClusterTimeGossip;
  // Runs on every new connection before its first request: a process of a cluster with a key
  // logs in to the other as __system (src/auth/internal_user.ts). `run` sends one command on it.
  authenticate?: (run: (db: string, cmd: Doc) => Promise<Doc>) => Promise<void>;
  // Connect over TLS with these options (the process's CA, and its certificate to present).
  tls?: tls.ConnectionOptions;
  // Connections to loopback hosts leave from this loopback address (a process bound to its own
  // 127.0.0.N), so that what is between two processes on one machine can be cut by address.
  loopbackSource?: string;
}

export interface CommandOptions {
  // Covers waiting for a connection, connecting and the round trip; none means wait forever.
  timeoutMs?: number;
  // Which member of a set a host string of the set form (`name/h1:p1,...`) resolves to
  // (src/client's set-aware Network); the primary when absent. A plain host ignores it.
  readPreference?: { mode: string; tags?: Doc[]; maxStalenessSeconds?: number };
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000; // MongoDB's connectTimeoutMS default
const DEFAULT_MAX_CONNECTIONS_PER_HOST = 16;
const MAX_REQUEST_ID = 0x7fffffff;

// Node-to-node commands over OP_MSG. Network failures reject with MongoError (HostUnreachable,
// NetworkTimeout, SocketException); a reply with ok: 0 is a reply, returned as is, because only
// the caller knows whether StaleConfig means "refresh" or "give up".
export class WireClient implements Network {
  private readonly pools = new Map<string, HostPool>();
  private readonly connectTimeoutMs: number;
  private readonly maxConnectionsPerHost: number;
  private readonly gossip: ClusterTimeGossip | undefined;
  private readonly authenticate: WireClientOptions['authenticate'];
  private readonly tls: tls.ConnectionOptions | undefined;
  private readonly loopbackSource: string | undefined;
  private nextRequestId = 1;
  private closed = false;

  constructor(options: WireClientOptions = {}) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.maxConnectionsPerHost = options.maxConnectionsPerHost ?? DEFAULT_MAX_CONNECTIONS_PER_HOST;
    this.gossip = options.gossip;
    this.authenticate = options.authenticate;
    this.tls = options.tls;
    this.loopbackSource = options.loopbackSource;
  }

  // A $clusterTime the command carries (a client's, passed on) gives way to this process's.
  async command(host: string, db: string, cmd: Doc, options: CommandOptions = {}): Promise<Doc> {
    const own = this.gossip !== undefined && '$clusterTime' in cmd ? withoutClusterTime(cmd) : cmd;
    const body = serializeDocument({ ...own, $db: db });
    return deserializeDocument(await this.commandRaw(host, db, body, options));
  }

  // Forwards a command already in BSON (a router passing a client's bytes on) and hands back the
  // reply's bytes, so neither side pays for decoding and re-encoding. `db` names the target in
  // errors; the body carries its own $db, and no $clusterTime: this process's is added.
  async commandRaw(host: string, db: string, body: Buffer, options: CommandOptions = {}): Promise<Buffer> {
    if (this.closed) throw shutdownError();
    const pool = this.poolFor(host);
    const requestId = this.takeRequestId();
    const message = encodeOpMsgRequest(this.gossip === undefined ? body : withElement(body, this.gossip.element()), requestId);
    const deadline = options.timeoutMs === undefined ? undefined : new AbortController();
    const timer = deadline && setTimeout(() => {
      deadline.abort(new MongoError(ErrorCodes.NetworkTimeout, `${host}: command on ${db} timed out after ${options.timeoutMs}ms`));
    }, options.timeoutMs);
    try {
      const conn = await pool.acquire(deadline?.signal);
      // A late reply would arrive on a connection that has moved on, so a timed-out request
      // takes its connection down with it.
      const onTimeout = (): void => conn.destroy(deadline!.signal.reason as MongoError);
      if (deadline?.signal.aborted) onTimeout();
      else deadline?.signal.addEventListener('abort', onTimeout, { once: true });
      try {
        const reply = await conn.request(message, requestId);
        this.gossip?.receive(reply);
        return reply;
      } finally {
        deadline?.signal.removeEventListener('abort', onTimeout);
        pool.release(conn);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  // A whole OP_MSG request built by the caller, its first OP_MSG_REPLY_PREFIX bytes left for the
  // header (as serializeWithRaw leaves them): the router's per-request path, which thereby
  // encodes a command into the message buffer itself, its $clusterTime included. No timeout, so
  // no timer or abort bookkeeping per request.
  forwardMessage(host: string, message: Buffer): Promise<Buffer> {
    if (this.closed) return Promise.reject(shutdownError());
    const requestId = this.takeRequestId();
    // A request's header is a reply's with responseTo 0: flags 0, one kind-0 section.
    finishOpMsgReply(message, requestId, 0);
    const sent = this.poolFor(host).send(message, requestId);
    const gossip = this.gossip;
    return gossip === undefined ? sent : sent.then((reply) => {
      gossip.receive(reply);
      return reply;
    });
  }

  // Fails every request in flight or waiting with ShutdownInProgress and drops all connections.
  async close(): Promise<void> {
    this.closed = true;
    const reason = shutdownError();
    for (const pool of this.pools.values()) pool.close(reason);
    this.pools.clear();
  }

  private poolFor(host: string): HostPool {
    let pool = this.pools.get(host);
    if (!pool) {
      const authenticate = this.authenticate;
      const address = parseHostAddress(host);
      const source = this.loopbackSource !== undefined && isLoopbackHost(address.host) ? this.loopbackSource : undefined;
      pool = new HostPool(address, {
        connectTimeoutMs: this.connectTimeoutMs,
        maxConnections: this.maxConnectionsPerHost,
        ...(this.tls === undefined ? {} : { tls: this.tls }),
        ...(source === undefined ? {} : { localAddress: source }),
        prepare: authenticate === undefined ? undefined : (conn) => authenticate((db, cmd) => {
          const requestId = this.takeRequestId();
          return conn.request(encodeOpMsgRequest(serializeDocument({ ...cmd, $db: db }), requestId), requestId).then(deserializeDocument);
        }),
      });
      this.pools.set(host, pool);
    }
    return pool;
  }

  private takeRequestId(): number {
    const id = this.nextRequestId;
    this.nextRequestId = id === MAX_REQUEST_ID ? 1 : id + 1;
    return id;
  }
}

// `cmd` without the $clusterTime a client passed in: a process gossips its own.
export function withoutClusterTime(cmd: Doc): Doc {
  const out: Doc = {};
  for (const [k, v] of Object.entries(cmd)) if (k !== '$clusterTime') out[k] = v;
  return out;
}

// The document `body` with `element` (BSON element bytes) appended.
export function withElement(body: Buffer, element: Buffer): Buffer {
  const out = Buffer.allocUnsafe(body.length + element.length);
  body.copy(out, 0, 0, body.length - 1);
  element.copy(out, body.length - 1);
  out[out.length - 1] = 0;
  out.writeInt32LE(out.length, 0);
  return out;
}

function shutdownError(): MongoError {
  return new MongoError(ErrorCodes.ShutdownInProgress, 'wire client is closed');
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host.startsWith('127.');
}
