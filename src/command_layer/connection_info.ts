import type { ConnectionAuth } from '../auth/connection_auth.js';
import type { Doc } from '../bson/values.js';

// A client's connection as every command sees it, on a node and on a router.
export interface ConnectionInfo {
  id: number;
  remote: string;
  local: string;
  clientMetadata?: Doc;
  // The compressors its last hello negotiated (`compression`): the only ones its OP_COMPRESSED
  // messages may use.
  compressors?: string[];
  // The user it authenticated as and its SASL conversation; absent until it starts one.
  auth?: ConnectionAuth;
  // Ends a client's connection at once: a reply not yet written is never written (what the fail
  // points' closeConnection asks). Absent where there is no socket.
  close?(): void;
}
