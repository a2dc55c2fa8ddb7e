import { Long } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import { checkOk } from '../wire/remote_cursor.js';
import { forwardsSession } from './command_entry.js';
import type { PartialResults } from './partial_results.js';
import type { RouterServices } from './router_services.js';
import { currentRouterTransaction } from './transaction_router.js';

// One shard's cursor seen from the router: the documents of its first batch, then getMore until
// the shard reports id 0. `close` kills the shard cursor if it is still open.
export class RemoteCursorStream implements AsyncIterable<Doc> {
  private id: unknown;
  private readonly collection: string;

  // `batchSize` is the one the router's command to the shard carried: its getMores ask for the
  // same, as mongos does, so a slow client does not make the router drain the shard's cursor (a
  // shard keeps a donated range while a cursor that still owns it is open). With `partial` (a find
  // with allowPartialResults), a shard lost during a getMore ends its stream instead of the find.
  constructor(private readonly router: RouterServices, private readonly host: string, private readonly db: string, private readonly firstReply: Doc, private readonly batchSize?: number, private readonly partial?: PartialResults) {
    const cursor = firstReply.cursor as Doc;
    this.id = cursor.id;
    this.collection = String(cursor.ns).slice(db.length + 1);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Doc> {
    let batch = (this.firstReply.cursor as Doc).firstBatch as Doc[];
    for (;;) {
      yield* batch;
      if (isZero(this.id)) return;
      const getMore: Doc = { getMore: this.id, collection: this.collection };
      if (this.batchSize !== undefined && this.batchSize > 0) getMore.batchSize = this.batchSize;
      let reply: Doc;
      try {
        reply = checkOk(await this.router.client.command(this.host, this.db, inTransaction(getMore)));
      } catch (err) {
        if (!this.partial?.tolerate(err)) throw err;
        this.id = Long.ZERO;
        return;
      }
      const cursor = reply.cursor as Doc;
      batch = cursor.nextBatch as Doc[];
      this.id = cursor.id;
    }
  }

  // The whole result when the shard answered it in its first batch (cursor id 0).
  completeFirstBatch(): Doc[] | undefined {
    return isZero(this.id) ? (this.firstReply.cursor as Doc).firstBatch as Doc[] : undefined;
  }

  async close(): Promise<void> {
    if (isZero(this.id)) return;
    const id = this.id;
    this.id = Long.ZERO;
    await this.router.client.command(this.host, this.db, inTransaction({ killCursors: this.collection, cursors: [id] })).catch(() => undefined);
  }
}

// A cursor a transaction opened on a shard is read in it.
function inTransaction(cmd: Doc): Doc {
  return currentRouterTransaction()?.sessionFields(cmd) ?? cmd;
}

function isZero(id: unknown): boolean {
  return id === undefined || id === 0 || String(id) === '0';
}

// Generic arguments that belong to the client's conversation with the router, not to the
// router's conversation with a shard. The read preference goes on with a read, as mongos's does:
// the network picks the member of a shard's set by it (src/client), and a secondary serves it.
const ROUTER_ONLY_FIELDS = ['$db', 'lsid', 'txnNumber', '$clusterTime', 'autocommit', 'startTransaction', 'apiVersion', 'apiStrict', 'apiDeprecationErrors', 'shardVersion', 'databaseVersion'];

export function batchSizeOf(cmd: Doc): number | undefined {
  const cursor = cmd.cursor as Doc | undefined;
  const size = cmd.batchSize ?? cursor?.batchSize;
  return typeof size === 'number' ? size : undefined;
}

// `except` is left out unread: a write's statements, which the router sends on itself (reading a
// field that came as a document sequence would decode it).
export function forwardable(cmd: Doc, except?: string): Doc {
  const out: Doc = {};
  for (const k of Object.keys(cmd)) if (k !== except && !ROUTER_ONLY_FIELDS.includes(k)) out[k] = cmd[k];
  if (!forwardsReadPreference(cmd)) delete out.$readPreference;
  return out;
}

// Only a read outside a transaction that asks for other than the primary: a transaction reads
// from the primaries its statements go to, and primary is where a shard's reads go anyway.
function forwardsReadPreference(cmd: Doc): boolean {
  const rp = cmd.$readPreference;
  return cmd.autocommit === undefined && isPlainObject(rp) && rp.mode !== undefined && rp.mode !== 'primary';
}

// A write's arguments for its shards: as `forwardable`, plus the session and transaction number of
// a retryable write, which mongos passes on too (forwardsSession, the rule the insert fast path
// follows as well). A shard lets a retryable write change a document's shard key and refuses it to
// any other.
export function forwardableWrite(cmd: Doc, except?: string): Doc {
  const out = forwardable(cmd, except);
  delete out.$readPreference;
  if (forwardsSession(true, cmd)) {
    out.lsid = cmd.lsid;
    out.txnNumber = cmd.txnNumber;
  }
  return out;
}
