import type { Doc } from '../bson/values.js';
import type { MongodServices } from './command.js';

// A --replSet member answers `$replData: 1` and `$oplogQueryData: 1` with its replication metadata
// (replication/oplog_query_metadata.ts), taken when the reply is ready: a getMore that waited for
// entries reports where the oplog ends as it answers.
export function withOplogQueryMetadata(node: MongodServices, cmd: Doc, reply: Doc | Promise<Doc>): Doc | Promise<Doc> {
  const repl = node.replication;
  if (repl === undefined || (cmd.$replData === undefined && cmd.$oplogQueryData === undefined)) return reply;
  const add = (r: Doc): Doc => (r.ok === 1 ? { ...r, ...repl.oplogQueryMetadata(cmd) } : r);
  return reply instanceof Promise ? reply.then(add) : add(reply);
}
