import type { Doc } from '../bson/values.js';
import type { CommandOptions } from './client.js';

// What a component that talks to other nodes needs of the network: a command and its reply,
// decoded or as bytes. WireClient is the real one (sockets); a deterministic simulator delivers
// the same bytes in memory, in an order it chooses, and fails them as a broken connection would.
export interface Network {
  command(host: string, db: string, cmd: Doc, options?: CommandOptions): Promise<Doc>;
  // `body` carries its own $db; `db` names the target in errors.
  commandRaw(host: string, db: string, body: Buffer, options?: CommandOptions): Promise<Buffer>;
}
