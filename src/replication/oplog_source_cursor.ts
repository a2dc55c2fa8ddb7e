import { Long } from 'bson';
import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import type { OplogFetch } from '../repl/messages.js';
import { opTimeEquals, type OpTime } from '../repl/op_time.js';
import type { Network } from '../wire/network.js';
import type { FetchedEntries, Translated } from './fetched_entries.js';
import { sourceMetadataOf } from './fetched_entries.js';
import { bsonTimestamp, opTimeDocument, parseOpTime } from './op_time_bson.js';

// How long one awaitData getMore waits on the source for new entries.
const AWAIT_DATA_MS = 1000;
// A fetch that found nothing keeps asking for this long before answering the core with an empty
// batch: the core waits before it asks again after one, and times a fetch out at 5 s.
const EMPTY_ANSWER_AFTER_MS = 3000;
// The find that opens the cursor (MongoDB's fetcher gives it 60 s).
const FIND_MAX_TIME_MS = 60_000;
const REQUEST_TIMEOUT_MS = 10_000;

function cursorId(cursor: Doc): Long {
  return typeof cursor.id === 'number' ? Long.fromNumber(cursor.id) : (cursor.id as Long);
}

// The source's oldest oplog entry, null if its oplog is empty: asked only when the source lacks
// the entry a fetch or rollback asked from, to tell a divergent history from an oplog that no
// longer reaches back (capped, or begun by initial sync).
export async function oldestOplogEntry(network: Network, host: string): Promise<OpTime | null> {
  const reply = await network.command(host, 'local', { find: 'oplog.rs', filter: {}, limit: 1, singleBatch: true }, { timeoutMs: REQUEST_TIMEOUT_MS });
  if (reply.ok !== 1) throw new Error(`${String(reply.codeName ?? reply.code)}: ${String(reply.errmsg)}`);
  const first = ((reply.cursor as Doc).firstBatch as Doc[])[0];
  return first === undefined ? null : parseOpTime(first);
}

export interface FetchContext {
  term: number;
  lastKnownCommittedOpTime: OpTime;
  nowMs(): number;
}

// MongoDB's OplogFetcher's query on the sync source: a tailable, awaitData find on local.oplog.rs
// from the last entry we hold, then getMores on the same cursor while the core asks from where the
// last batch ended; another source, or a position the cursor is not at, opens a new one.
export class OplogSourceCursor {
  private cursor: { host: string; id: Long; at: OpTime } | undefined;

  constructor(private readonly network: Network, private readonly fetched: FetchedEntries, private readonly logger: Logger) {}

  // The core's answer to `req`, or a malformed batch; undefined when the source could not be read
  // (the core times the fetch out and chooses again).
  async fetch(host: string, req: OplogFetch, ctx: FetchContext): Promise<Translated | undefined> {
    try {
      const c = this.cursor;
      if (c !== undefined && c.host === host && opTimeEquals(c.at, req.lastFetched)) return await this.more(c, req, ctx);
      this.close();
      return await this.open(host, req);
    } catch (err) {
      this.logger.info({ c: 'REPL', host, err: (err as Error).message }, 'Oplog fetcher query failed');
      this.cursor = undefined;
      return undefined;
    }
  }

  private async open(host: string, req: OplogFetch): Promise<Translated> {
    const reply = await this.command(host, {
      find: 'oplog.rs', filter: { ts: { $gte: bsonTimestamp(req.lastFetched.ts) } }, tailable: true, awaitData: true, maxTimeMS: FIND_MAX_TIME_MS,
      term: Long.fromNumber(req.term), $replData: 1, $oplogQueryData: 1,
    });
    const cursor = reply.cursor as Doc;
    const docs = cursor.firstBatch as unknown[];
    const out = this.fetched.translate(docs, req.lastFetched, true, sourceMetadataOf(reply));
    this.keep(host, cursorId(cursor), out, req.lastFetched);
    if (out.ok && out.response.status === 'OplogStartMissing') return { ok: true, response: { ...out.response, oldestOpTime: await oldestOplogEntry(this.network, host) } };
    return out;
  }

  private async more(c: { host: string; id: Long; at: OpTime }, req: OplogFetch, ctx: FetchContext): Promise<Translated> {
    const until = ctx.nowMs() + EMPTY_ANSWER_AFTER_MS;
    for (;;) {
      const reply = await this.command(c.host, {
        getMore: c.id, collection: 'oplog.rs', maxTimeMS: AWAIT_DATA_MS, term: Long.fromNumber(ctx.term),
        lastKnownCommittedOpTime: opTimeDocument(ctx.lastKnownCommittedOpTime), $replData: 1, $oplogQueryData: 1,
      });
      const cursor = reply.cursor as Doc;
      const docs = cursor.nextBatch as unknown[];
      if (docs.length === 0 && Number(cursor.id) !== 0 && ctx.nowMs() < until) continue;
      const out = this.fetched.translate(docs, req.lastFetched, false, sourceMetadataOf(reply));
      this.keep(c.host, cursorId(cursor), out, req.lastFetched);
      return out;
    }
  }

  private keep(host: string, id: Long, out: Translated, from: OpTime): void {
    const last = out.ok && out.response.status === 'ok' ? out.response.entries.at(-1) : undefined;
    const usable = out.ok && out.response.status === 'ok' && !id.isZero();
    this.cursor = usable ? { host, id, at: last === undefined ? from : { ts: last.ts, t: last.t } } : undefined;
    if (!usable && !id.isZero()) this.kill(host, id);
  }

  private async command(host: string, cmd: Doc): Promise<Doc> {
    const reply = await this.network.command(host, 'local', cmd, { timeoutMs: REQUEST_TIMEOUT_MS });
    if (reply.ok !== 1) throw new Error(`${String(reply.codeName ?? reply.code)}: ${String(reply.errmsg)}`);
    return reply;
  }

  // Leaves the cursor (another source, a stop): the source's is killed, not waited for.
  close(): void {
    const c = this.cursor;
    this.cursor = undefined;
    if (c !== undefined) this.kill(c.host, c.id);
  }

  private kill(host: string, id: Long): void {
    this.network.command(host, 'local', { killCursors: 'oplog.rs', cursors: [id] }, { timeoutMs: REQUEST_TIMEOUT_MS }).catch(() => undefined);
  }
}

