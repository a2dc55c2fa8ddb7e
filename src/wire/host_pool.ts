import type tls from 'node:tls';
import type { MongoError } from '../base/errors.js';
import { ClientConnection, type HostAddress } from './client_connection.js';

interface Waiter {
  resolve(conn: ClientConnection): void;
  reject(err: unknown): void;
}

// The connections to one host: at most `maxConnections` exist (idle, busy or being opened);
// requests beyond that wait in arrival order for one to be released.
export class HostPool {
  private readonly idle: ClientConnection[] = [];
  private readonly connections = new Set<ClientConnection>();
  private readonly waiters: Waiter[] = [];
  private opening = 0;
  private closedReason: MongoError | undefined;
  private readonly releaseOne = (conn: ClientConnection): void => this.release(conn);

  constructor(
    private readonly address: HostAddress,
    // `prepare` runs on each new connection before any request (internal authentication); its
    // failure closes the connection and fails the waiters as a failed connect does.
    // `tls`: connect over TLS with these options (the process's preferTLS or requireTLS).
    private readonly options: { connectTimeoutMs: number; maxConnections: number; prepare?: (conn: ClientConnection) => Promise<void>; tls?: tls.ConnectionOptions; localAddress?: string },
  ) {}

  // The caller owns the connection until it calls release(). An aborted wait rejects with the
  // signal's reason; a connection being opened for it then goes to the next waiter or idles.
  acquire(signal?: AbortSignal): Promise<ClientConnection> {
    if (this.closedReason) return Promise.reject(this.closedReason);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const ready = this.idle.pop();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        resolve: (conn) => { signal?.removeEventListener('abort', onAbort); resolve(conn); },
        reject: (err) => { signal?.removeEventListener('abort', onAbort); reject(err); },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.growIfNeeded();
    });
  }

  // One request on a connection of this pool, released as soon as its reply (or failure) is in.
  // With an idle connection at hand the request is written before this returns.
  send(message: Buffer, requestId: number): Promise<Buffer> {
    const ready = this.closedReason ? undefined : this.idle.pop();
    if (ready) return ready.request(message, requestId, this.releaseOne);
    return this.acquire().then((conn) => conn.request(message, requestId, this.releaseOne));
  }

  release(conn: ClientConnection): void {
    if (!conn.alive) return; // its close listener already took it out of the pool
    if (this.closedReason) {
      conn.destroy(this.closedReason);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(conn);
    else this.idle.push(conn);
  }

  close(reason: MongoError): void {
    this.closedReason ??= reason;
    for (const waiter of this.waiters.splice(0)) waiter.reject(reason);
    for (const conn of [...this.connections]) conn.destroy(reason);
  }

  private growIfNeeded(): void {
    if (this.waiters.length <= this.opening) return;
    if (this.connections.size + this.opening >= this.options.maxConnections) return;
    this.opening += 1;
    const prepare = this.options.prepare;
    ClientConnection.connect(this.address, this.options.connectTimeoutMs, this.options.tls, this.options.localAddress).then((conn) => (prepare === undefined ? conn : prepare(conn).then(() => conn, (err: unknown) => {
      conn.destroy(err as MongoError);
      throw err;
    }))).then(
      (conn) => {
        this.opening -= 1;
        this.connections.add(conn);
        conn.onClose(() => this.forget(conn));
        this.release(conn);
      },
      (err: MongoError) => {
        this.opening -= 1;
        // The host did not answer one connection attempt: every waiter would hit the same wall,
        // so all of them fail now rather than each after its own connect timeout.
        for (const waiter of this.waiters.splice(0)) waiter.reject(err);
      },
    );
  }

  private forget(conn: ClientConnection): void {
    this.connections.delete(conn);
    const index = this.idle.indexOf(conn);
    if (index >= 0) this.idle.splice(index, 1);
    // A freed slot lets a waiter that found the pool full open a fresh connection.
    if (!this.closedReason) this.growIfNeeded();
  }
}
