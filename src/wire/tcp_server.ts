import net from 'node:net';
import { secureSocket, type ServerTls } from './tls_mode.js';
import { FramingError } from './message.js';
import { MessageFramer } from './framer.js';
import { TurnWriter } from './turn_writer.js';

export interface Connection {
  id: number;
  remote: string;
  local: string;
  // Destroys the socket: replies not yet written are dropped, later messages are not handled.
  close(): void;
}

// A reply of the exhaust protocol (OP_MSG moreToCome, a streaming hello): once it is written,
// `next` gives the request's next reply, until one comes without `next`; the connection handles
// nothing else meanwhile, as MongoDB's does.
export type ServerReply = Buffer & { readonly next?: () => Promise<ServerReply | undefined> };

export interface ServerHandlers {
  // Returns the reply bytes, or undefined when the request wants none (moreToCome); directly when
  // the message was handled synchronously, which saves a promise and a microtask per request.
  onMessage(conn: Connection, message: Buffer): ServerReply | undefined | Promise<ServerReply | undefined>;
  onConnect?(conn: Connection): void;
  onClose?(conn: Connection, reason: string | undefined): void;
  // The longest message the connection may send next (maxMessageSizeBytes when absent); a longer
  // one closes it as soon as its header arrives.
  maxMessageBytes?(conn: Connection): number;
  // A connection closed on arrival because `maxConnections` were open; `open` counts them.
  onRefuse?(remote: string, open: number): void;
}

// A TCP server that survives any input: each connection handles its messages one at a time in
// arrival order (replies are never reordered), and a framing error closes only that connection.
// Beyond `maxConnections` open at once, a new connection is closed before anything is read from
// it, as mongod closes it (net.maxIncomingConnections): no reply, so nothing to parse or allocate.
export class TcpServer {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private nextConnectionId = 1;
  private readonly replies = new TurnWriter();

  // `tls`: the port's TLS (--tlsMode); none or disabled serves plain connections only.
  constructor(private readonly handlers: ServerHandlers, private readonly maxConnections = Number.POSITIVE_INFINITY, private readonly tls?: ServerTls) {
    this.server = net.createServer((socket) => this.accept(socket));
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    if (this.sockets.size >= this.maxConnections) {
      this.handlers.onRefuse?.(`${socket.remoteAddress}:${socket.remotePort}`, this.sockets.size);
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    this.sockets.add(socket);
    const tls = this.tls;
    if (tls === undefined || tls.mode === 'disabled') {
      this.serve(socket, socket);
      return;
    }
    // TLS or not is told by the first bytes (allowTLS, preferTLS), or must be TLS (requireTLS).
    let served = false;
    socket.once('close', () => { if (!served) this.sockets.delete(socket); });
    socket.once('data', (first: Buffer) => {
      socket.pause();
      served = true;
      const stream = secureSocket(socket, first, tls);
      if (stream === undefined) {
        this.sockets.delete(socket);
        socket.destroy();
        return;
      }
      this.serve(socket, stream);
      socket.resume();
    });
    socket.on('error', () => undefined);
  }

  // Serves the wire protocol on `stream`: the raw socket itself, or the TLS socket over it.
  private serve(socket: net.Socket, stream: net.Socket): void {
    let closeReason: string | undefined;
    const conn: Connection = {
      id: this.nextConnectionId++,
      remote: `${socket.remoteAddress}:${socket.remotePort}`,
      local: `${socket.localAddress}:${socket.localPort}`,
      close: () => {
        closeReason = 'closed by the server';
        stream.destroy();
      },
    };
    this.handlers.onConnect?.(conn);
    const framer = new MessageFramer();
    const queue: Buffer[] = [];
    let busy = false;

    const fail = (err: unknown): void => {
      closeReason = err instanceof Error ? err.message : String(err);
      stream.destroy();
    };
    const send = (reply: Buffer | undefined): void => {
      if (reply && !stream.destroyed) this.replies.add(stream, reply);
    };
    // Writes a reply and, for a streaming one, the replies that follow it; true while they go on
    // (the pump resumes after the last).
    const sendAll = (reply: ServerReply | undefined): boolean => {
      send(reply);
      const next = reply?.next;
      if (next === undefined || stream.destroyed) return false;
      next().then(resume, fail);
      return true;
    };
    const resume = (reply: ServerReply | undefined): void => {
      try {
        if (sendAll(reply)) return;
        busy = false;
        pump();
      } catch (err) {
        fail(err);
      }
    };
    // Handles queued messages in order; an asynchronous reply suspends the loop until it is sent.
    const pump = (): void => {
      if (busy) return;
      busy = true;
      while (queue.length > 0 && !stream.destroyed) {
        let reply;
        try {
          reply = this.handlers.onMessage(conn, queue.shift()!);
          if (!(reply instanceof Promise)) {
            if (sendAll(reply)) return;
            continue;
          }
        } catch (err) {
          fail(err);
          break;
        }
        // One reaction for both outcomes: a `.catch` chained after would cost every request a
        // second microtask.
        reply.then(resume, fail);
        return;
      }
      busy = false;
    };

    stream.on('data', (chunk: Buffer) => {
      try {
        for (const message of framer.push(chunk, this.handlers.maxMessageBytes?.(conn))) queue.push(message);
      } catch (err) {
        closeReason = err instanceof FramingError ? err.message : String(err);
        stream.destroy();
        return;
      }
      pump();
    });
    stream.on('error', (err) => { closeReason = err.message; });
    if (stream !== socket) socket.on('close', () => stream.destroy());
    stream.on('close', () => {
      this.sockets.delete(socket);
      socket.destroy();
      this.handlers.onClose?.(conn, closeReason);
    });
  }
}
