import net from 'node:net';
import { FramingError } from './message.js';
import { MessageFramer } from './framer.js';

export interface Connection {
  id: number;
  remote: string;
  local: string;
}

export interface ServerHandlers {
  // Returns the reply bytes, or undefined when the request wants none (moreToCome); directly when
  // the message was handled synchronously, which saves a promise and a microtask per request.
  onMessage(conn: Connection, message: Buffer): Buffer | undefined | Promise<Buffer | undefined>;
  onConnect?(conn: Connection): void;
  onClose?(conn: Connection, reason: string | undefined): void;
}

// A TCP server that survives any input: each connection handles its messages one at a time in
// arrival order (replies are never reordered), and a framing error closes only that connection.
export class TcpServer {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private nextConnectionId = 1;
  private readonly replies = new ReplyWriter();

  constructor(private readonly handlers: ServerHandlers) {
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
    socket.setNoDelay(true);
    this.sockets.add(socket);
    const conn: Connection = {
      id: this.nextConnectionId++,
      remote: `${socket.remoteAddress}:${socket.remotePort}`,
      local: `${socket.localAddress}:${socket.localPort}`,
    };
    this.handlers.onConnect?.(conn);
    const framer = new MessageFramer();
    const queue: Buffer[] = [];
    let busy = false;
    let closeReason: string | undefined;

    const fail = (err: unknown): void => {
      closeReason = err instanceof Error ? err.message : String(err);
      socket.destroy();
    };
    const send = (reply: Buffer | undefined): void => {
      if (reply && !socket.destroyed) this.replies.add(socket, reply);
    };
    // Handles queued messages in order; an asynchronous reply suspends the loop until it is sent.
    const pump = (): void => {
      if (busy) return;
      busy = true;
      while (queue.length > 0 && !socket.destroyed) {
        let reply;
        try {
          reply = this.handlers.onMessage(conn, queue.shift()!);
          if (!(reply instanceof Promise)) {
            send(reply);
            continue;
          }
        } catch (err) {
          fail(err);
          break;
        }
        reply.then((r) => {
          busy = false;
          send(r);
          pump();
        }).catch(fail);
        return;
      }
      busy = false;
    };

    socket.on('data', (chunk: Buffer) => {
      try {
        for (const message of framer.push(chunk)) queue.push(message);
      } catch (err) {
        closeReason = err instanceof FramingError ? err.message : String(err);
        socket.destroy();
        return;
      }
      pump();
    });
    socket.on('error', (err) => { closeReason = err.message; });
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.handlers.onClose?.(conn, closeReason);
    });
  }
}

// The first reply of an event-loop turn is written at once; the rest wait for the turn's check
// phase, after every connection that had data in this turn has been handled, and go out
// together. Written one by one as they complete, nearly every reply pays for waking a client
// that has gone idle waiting for it; written together, the first wakes it and the rest find it
// awake. While turns carry a single reply (one busy connection), marking the end of each turn is
// pure cost, so replies are then written at once for a while before the next turn is looked at.
const DIRECT_WRITES_AFTER_LONE_TURN = 32;

class ReplyWriter {
  private pending: { socket: net.Socket; reply: Buffer }[] = [];
  private turnMarked = false;
  private directWrites = 0;

  add(socket: net.Socket, reply: Buffer): void {
    if (this.turnMarked) {
      this.pending.push({ socket, reply });
      return;
    }
    socket.write(reply);
    if (this.directWrites > 0) {
      this.directWrites -= 1;
      return;
    }
    this.turnMarked = true;
    setImmediate(this.endTurn);
  }

  private readonly endTurn = (): void => {
    this.turnMarked = false;
    const pending = this.pending;
    if (pending.length === 0) {
      this.directWrites = DIRECT_WRITES_AFTER_LONE_TURN;
      return;
    }
    this.pending = [];
    for (const { socket, reply } of pending) if (!socket.destroyed) socket.write(reply);
  };
}
