import type { Doc } from '../bson/values.js';
import type { CommandOptions } from './client.js';
import type { ServerHandlers } from './tcp_server.js';
import type { ServerTls } from './tls_mode.js';

// MongoDB's VectorClock gossip on node-to-node traffic, which a process gives its WireClient:
// every request carries the sender's $clusterTime, and each reply's moves the sender's clock.
export interface ClusterTimeGossip {
  // The request element {$clusterTime: ...} (BSON element bytes) with this process's time.
  element(): Buffer;
  // Takes in the $clusterTime a reply's body ends with; throws what the clock refuses.
  receive(reply: Buffer): void;
}

// What a component that talks to other nodes needs of the network: a command and its reply,
// decoded or as bytes. WireClient is the real one (sockets); a deterministic simulator delivers
// the same bytes in memory, in an order it chooses, and fails them as a broken connection would.
export interface Network {
  command(host: string, db: string, cmd: Doc, options?: CommandOptions): Promise<Doc>;
  // `body` carries its own $db; `db` names the target in errors.
  commandRaw(host: string, db: string, body: Buffer, options?: CommandOptions): Promise<Buffer>;
  // A whole OP_MSG request, its first OP_MSG_REPLY_PREFIX bytes left for the header; the reply's
  // body. The router's per-request path.
  forwardMessage(host: string, message: Buffer): Promise<Buffer>;
  // Fails what is in flight with ShutdownInProgress; nothing is sent afterwards.
  close(): Promise<void>;
}

// The listening side of a process: its handlers get each message a client sends and give back
// the reply. TcpServer is the real one; a simulator's hands it the messages its network delivers.
export interface Listener {
  // Resolves to the port bound (0 asks for any).
  listen(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

export type OpenListener = (handlers: ServerHandlers, maxConnections: number | undefined, tls: ServerTls | undefined) => Listener;
