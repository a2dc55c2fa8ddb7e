import { Long } from 'bson';
import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import type { OplogFetch } from '../repl/messages.js';
import { opTimeEquals, type OpTime } from '../repl/op_time.js';
import type { Network } from '../wire/network.js';
import { sourceMetadataOf, translateBatch, type Translated } from './fetched_entries.js';
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

type SourceCursor = { host: string; id: Long; at: OpTime };

// MongoDB's OplogFetcher's query on the sync source: a tailable, awaitData find on local.oplog.rs
// from the last entry we hold, then getMores on the same cursor while the core asks from where the
// last batch ended; another source, or a position the cursor is not at, opens a new one.
// One fetch at a time is the core's: a fetch it gave up on (its answer came too late) may still be
// waiting on the source when it asks again. The new fetch opens a cursor of its own, and the old
// one's answer, whenever it comes, is dropped rather than taken for the new one's.
export class OplogSourceCursor {
  private cursor: SourceCursor | undefined;
  // Raised by each fetch and by close(): an answer of an earlier turn is not delivered.
  private turn = 0;

  constructor(private readonly network: Network, private readonly logger: Logger) {}

  // The core's answer to `req`, or a malformed batch; undefined when the source could not be read
  // (the core times the fetch out and chooses again) or when a later fetch or close() overtook it.
  async fetch(host: string, req: OplogFetch, ctx: FetchContext): Promise<Translated | undefined> {
    const turn = ++this.turn;
    const c = this.cursor;
    // The fetch holds its cursor until it answers: a fetch asked meanwhile opens its own.
    this.cursor = undefined;
    try {
      let got: { id: Long; out: Translated };
      if (c !== undefined && c.host === host && opTimeEquals(c.at, req.lastFetched)) {
        got = await this.more(c, req, ctx);
      } else {
        if (c !== undefined) this.kill(c.host, c.id);
        got = await this.open(host, req);
      }
      const next = usableCursor(host, got.id, got.out, req.lastFetched);
      if (next === undefined && !got.id.isZero()) this.kill(host, got.id);
      if (turn !== this.turn) {
        if (next !== undefined) this.kill(host, next.id);
        return undefined;
      }
      this.cursor = next;
      return got.out;
    } catch (err) {
      this.logger.info({ c: 'REPL', host, err: (err as Error).message }, 'Oplog fetcher query failed');
      return undefined;
    }
  }

  private async open(host: string, req: OplogFetch): Promise<{ id: Long; out: Translated }> {
    const reply = await this.command(host, {
      find: 'oplog.rs', filter: { ts: { $gte: bsonTimestamp(req.lastFetched.ts) } }, tailable: true, awaitData: true, maxTimeMS: FIND_MAX_TIME_MS,
      term: Long.fromNumber(req.term), $replData: 1, $oplogQueryData: 1,
    });
    const cursor = reply.cursor as Doc;
    const out = translateBatch(cursor.firstBatch as unknown[], req.lastFetched, true, sourceMetadataOf(reply));
    const id = cursorId(cursor);
    if (out.ok && out.response.status === 'OplogStartMissing') return { id, out: { ...out, response: { ...out.response, oldestOpTime: await oldestOplogEntry(this.network, host) } } };
    return { id, out };
  }

  private async more(c: SourceCursor, req: OplogFetch, ctx: FetchContext): Promise<{ id: Long; out: Translated }> {
    const until = ctx.nowMs() + EMPTY_ANSWER_AFTER_MS;
    for (;;) {
      const reply = await this.command(c.host, {
        getMore: c.id, collection: 'oplog.rs', maxTimeMS: AWAIT_DATA_MS, term: Long.fromNumber(ctx.term),
        lastKnownCommittedOpTime: opTimeDocument(ctx.lastKnownCommittedOpTime), $replData: 1, $oplogQueryData: 1,
      });
      const cursor = reply.cursor as Doc;
      const docs = cursor.nextBatch as unknown[];
      if (docs.length === 0 && Number(cursor.id) !== 0 && ctx.nowMs() < until) continue;
      return { id: cursorId(cursor), out: translateBatch(docs, req.lastFetched, false, sourceMetadataOf(reply)) };
    }
  }

  private async command(host: string, cmd: Doc): Promise<Doc> {
    const reply = await this.network.command(host, 'local', cmd, { timeoutMs: REQUEST_TIMEOUT_MS });
    if (reply.ok !== 1) throw new Error(`${String(reply.codeName ?? reply.code)}: ${String(reply.errmsg)}`);
    return reply;
  }

  // Leaves the cursor (another source, a stop, a resync): the source's is killed, not waited for,
  // and a fetch still under way answers nothing.
  close(): void {
    this.turn += 1;
    const c = this.cursor;
    this.cursor = undefined;
    if (c !== undefined) this.kill(c.host, c.id);
  }

  private kill(host: string, id: Long): void {
    this.network.command(host, 'local', { killCursors: 'oplog.rs', cursors: [id] }, { timeoutMs: REQUEST_TIMEOUT_MS }).catch(() => undefined);
  }
}

// The cursor the next fetch goes on with: one still open after a batch the core can take, at the
// batch's last entry.
function usableCursor(host: string, id: Long, out: Translated, from: OpTime): SourceCursor | undefined {
  if (!out.ok || out.response.status !== 'ok' || id.isZero()) return undefined;
  const last = out.response.entries.at(-1);
  return { host, id, at: last === undefined ? from : { ts: last.ts, t: last.t } };
}
