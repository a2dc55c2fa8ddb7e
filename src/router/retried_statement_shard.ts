import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { ChunkManager } from './chunk_manager.js';
import type { RouterServices } from './router_services.js';
import { sendToShard } from './versioned_request.js';

// A retryable write without shard key looks for its document before it writes, and a retry's
// filter may find another one, on another shard, than the first attempt wrote: so the router first
// asks every shard of the collection whether the statement ran there, and a retry goes where it
// did, to be answered from that shard's history. undefined when the write is not retryable or
// ran nowhere. A migration that carried the statement's history leaves it on both shards, which
// answer alike.
export async function shardThatRanStatement(router: RouterServices, cm: ChunkManager, cmd: Doc, stmtId: number): Promise<string | undefined> {
  if (cmd.txnNumber === undefined || cmd.autocommit !== undefined || !isPlainObject(cmd.lsid)) return undefined;
  const shards = [...cm.getAllShardIds()].sort();
  const probe = { _shardsvrRetryableStatementExecuted: 1, lsid: cmd.lsid, txnNum: cmd.txnNumber, stmtId };
  const replies = await Promise.all(shards.map((shard) => sendToShard(router, shard, 'admin', probe)));
  for (const reply of replies) {
    if (reply.ok !== 1) {
      const { ok: _ok, errmsg, code, ...extra } = reply;
      throw new MongoError(typeof code === 'number' ? code : ErrorCodes.InternalError, String(errmsg ?? 'statement lookup failed'), extra);
    }
  }
  const i = replies.findIndex((reply) => reply.executed === true);
  return i < 0 ? undefined : shards[i];
}
