import type { Doc } from '../bson/values.js';
import type { CommandOptions } from './client.js';

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
}
