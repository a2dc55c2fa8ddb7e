import net from 'node:net';
import tls from 'node:tls';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { MessageFramer } from './framer.js';
import { OP_MSG_REPLY_PREFIX, parseOpMsg, readHeader } from './message.js';
import { HEADER_SIZE, OpCode } from './op_codes.js';
import { TurnWriter } from './turn_writer.js';

// Requests to every host, written as the server writes its replies (turn_writer.ts).
const outgoing = new TurnWriter();

export interface HostAddress {
  host: string;
  port: number;
  label: string; // "host:port", as callers name it, for error messages
}

// "127.0.0.1:27018" or "[::1]:27018", as MongoDB's HostAndPort writes them.
export function parseHostAddress(label: string): HostAddress {
  const colon = label.lastIndexOf(':');
  const port = Number(label.slice(colon + 1));
  let host = label.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (colon <= 0 || host === '' || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new MongoError(ErrorCodes.FailedToParse, `invalid host and port: "${label}"`);
  }
  return { host, port, label };
}

// Refused or unroutable means the host is not there (callers may try another); anything else
// that breaks a stream is a socket error, as in MongoDB's network layer.
function networkError(err: NodeJS.ErrnoException, address: HostAddress): MongoError {
  switch (err.code) {
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new MongoError(ErrorCodes.HostUnreachable, `${address.label}: ${err.message}`);
    case 'ETIMEDOUT':
      return new MongoError(ErrorCodes.NetworkTimeout, `${address.label}: ${err.message}`);
    default:
      return new MongoError(ErrorCodes.SocketException, `${address.label}: ${err.message}`);
  }
}

interface Pending {
  requestId: number;
  resolve(body: Buffer): void;
  reject(err: MongoError): void;
  settled: ((conn: ClientConnection) => void) | undefined;
}

// One socket to one host carrying one request at a time, so a reply must answer exactly the
// request in flight; anything else means the stream cannot be trusted and the connection dies.
// A dead connection never comes back: the pool opens a new one.
export class ClientConnection {
  private readonly framer = new MessageFramer();
  private pending: Pending | undefined;
  private failure: MongoError | undefined;
  private readonly closeListeners: Array<() => void> = [];

  private constructor(private readonly socket: net.Socket, readonly address: HostAddress) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (err) => this.destroy(networkError(err, address)));
    socket.on('close', () => this.destroy(new MongoError(ErrorCodes.HostUnreachable, `${address.label}: connection closed by peer`)));
    this.setIdle(true);
  }

  // With `secure`, over TLS (the process's preferTLS or requireTLS): ready once the handshake has
  // verified the server's certificate for the host.
  // From `localAddress` when given (a process bound to its own loopback address).
  static connect(address: HostAddress, timeoutMs: number, secure?: tls.ConnectionOptions, localAddress?: string): Promise<ClientConnection> {
    return new Promise((resolve, reject) => {
      const from = localAddress === undefined ? {} : { localAddress };
      const socket = secure === undefined
        ? net.connect({ host: address.host, port: address.port, ...from })
        : tls.connect({ ...secure, ...from, host: address.host, port: address.port, ...(net.isIP(address.host) === 0 ? { servername: address.host } : {}) });
      socket.setNoDelay(true);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new MongoError(ErrorCodes.NetworkTimeout, `${address.label}: timed out connecting after ${timeoutMs}ms`));
      }, timeoutMs);
      const onError = (err: NodeJS.ErrnoException): void => {
        clearTimeout(timer);
        reject(networkError(err, address));
      };
      socket.once('error', onError);
      socket.once(secure === undefined ? 'connect' : 'secureConnect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        resolve(new ClientConnection(socket, address));
      });
    });
  }

  get alive(): boolean {
    return this.failure === undefined;
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  // Resolves with the reply's body section (a BSON document, not yet validated). `settled` runs
  // right after the promise is settled, before anything awaiting it: a pool that releases the
  // connection there has it idle again for a request the awaiting code sends next.
  request(message: Buffer, requestId: number, settled?: (conn: ClientConnection) => void): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending) return Promise.reject(new MongoError(ErrorCodes.InternalError, `${this.address.label}: connection already has a request in flight`));
    return new Promise((resolve, reject) => {
      this.pending = { requestId, resolve, reject, settled };
      this.setIdle(false);
      outgoing.add(this.socket, message);
    });
  }

  // Fails the request in flight with `reason` (timeouts and shutdown pass their own).
  destroy(reason: MongoError): void {
    if (this.failure) return;
    this.failure = reason;
    this.socket.destroy();
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(reason);
    pending?.settled?.(this);
    for (const listener of this.closeListeners) listener();
  }

  // An idle pooled socket must not keep the process alive; one with a request in flight must.
  private setIdle(idle: boolean): void {
    if (idle) this.socket.unref();
    else this.socket.ref();
  }

  private receive(chunk: Buffer): void {
    let messages: Buffer[];
    try {
      messages = this.framer.push(chunk);
    } catch (err) {
      this.protocolError((err as Error).message);
      return;
    }
    for (const message of messages) {
      if (!this.alive) return;
      this.answer(message);
    }
  }

  private answer(message: Buffer): void {
    const responseTo = message.readInt32LE(8);
    const pending = this.pending;
    if (!pending || responseTo !== pending.requestId) {
      this.protocolError(`reply to request ${responseTo} while ${pending ? `request ${pending.requestId}` : 'no request'} is in flight`);
      return;
    }
    const opCode = message.readInt32LE(12);
    if (opCode !== OpCode.OP_MSG) {
      this.protocolError(`unexpected reply opCode ${opCode}`);
      return;
    }
    let body = soleBody(message);
    if (body === undefined) {
      try {
        body = parseOpMsg(readHeader(message), message).body;
      } catch (err) {
        this.protocolError((err as Error).message);
        return;
      }
    }
    this.pending = undefined;
    this.setIdle(true);
    pending.resolve(body);
    pending.settled?.(this);
  }

  private protocolError(detail: string): void {
    this.destroy(new MongoError(ErrorCodes.SocketException, `${this.address.label}: invalid reply: ${detail}`));
  }
}

// The body of a reply that is one body section and no flags (as every node writes its replies),
// cut out without parsing the message; undefined for any other, which parseOpMsg then reads.
function soleBody(message: Buffer): Buffer | undefined {
  if (message.length < OP_MSG_REPLY_PREFIX + 5 || message.readUInt32LE(HEADER_SIZE) !== 0 || message[HEADER_SIZE + 4] !== 0) return undefined;
  return OP_MSG_REPLY_PREFIX + message.readInt32LE(OP_MSG_REPLY_PREFIX) === message.length ? message.subarray(OP_MSG_REPLY_PREFIX) : undefined;
}
