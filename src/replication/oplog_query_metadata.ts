import { Long } from 'bson';
import type { Doc } from '../bson/values.js';
import type { OpTime } from '../repl/op_time.js';
import { primaryIndex, type TopologyState } from '../repl/topology_state.js';
import { opTimeDocument } from './op_time_bson.js';

// What MongoDB attaches to a reply when the command asks with `$replData: 1` (ReplSetMetadata) and
// `$oplogQueryData: 1` (OplogQueryMetadata), as its oplog fetcher does on every find and getMore:
// the source's term and commit point, and where its own oplog ends (`lastApplied`, what the reply's
// entries can reach).
export function oplogQueryMetadata(s: TopologyState, lastApplied: OpTime, rbid: number, cmd: Doc): Doc {
  const committed = opTimeDocument(s.lastCommittedOpTime);
  const syncSourceIndex = s.fetch.syncSourceIndex ?? -1;
  const out: Doc = {};
  if (cmd.$replData !== undefined) {
    out.$replData = {
      term: Long.fromNumber(s.term), lastOpCommitted: committed, lastOpVisible: committed, configVersion: s.config.version,
      syncSourceIndex, isPrimary: s.role === 'leader',
    };
  }
  if (cmd.$oplogQueryData !== undefined) {
    out.$oplogQueryData = { lastOpCommitted: committed, lastOpApplied: opTimeDocument(lastApplied), rbid, primaryIndex: primaryIndex(s) ?? -1, syncSourceIndex };
  }
  return out;
}
