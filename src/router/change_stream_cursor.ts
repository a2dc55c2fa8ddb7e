import { Long, Timestamp } from 'bson';
import { highWaterMarkToken } from '../change_streams/resume_token.js';
import type { Doc } from '../bson/values.js';
import { withResumableLabel } from '../change_streams/resumable_errors.js';
import { checkOk } from '../wire/remote_cursor.js';
import { ChangeStreamMerge, tokenOf } from './change_stream_merge.js';
import type { RouterEventFilter } from './change_stream_events.js';
import type { ForwardedCursor } from './cluster_cursor_manager.js';
import type { RouterServices } from './router_services.js';

// A shard's stream under the router's: its cursor there and the getMore in flight, if any.
export interface ShardStream {
  shard: string;
  host: string;
  db: string;
  collection: string;
  id: Long;
}

// How long a shard's getMore waits for events: short, so that a shard that holds an event back
// is asked again soon after it has been made to promise more (see `heartbeat`).
const SHARD_WAIT_MS = 200;
// A getMore without maxTimeMS waits 1 s, as on a node.
const DEFAULT_WAIT_MS = 1000;

// The router's change stream cursor: every getMore releases the merged events (ChangeStreamMerge)
// that every shard lets through, up to the batch size, or waits for them up to its maxTimeMS. A
// shard's getMores run beside the router's and may outlive one: their answers are merged by the
// next. The cursor ends after an invalidate.
export class ChangeStreamClusterCursor implements ForwardedCursor {
  readonly awaitData = true;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly heartbeats = new Map<string, Promise<boolean>>();
  private failure: unknown;
  private ended = false;
  private joining: Promise<void> | undefined;
  private lastJoinMs: number;

  constructor(
    private readonly router: RouterServices,
    private readonly streams: Map<string, ShardStream>,
    private readonly merge: ChangeStreamMerge,
    private readonly filter: RouterEventFilter,
    // The user's stages and the router's own lookups, applied to each released event: undefined
    // when the event is filtered out.
    private readonly finish: (event: Doc) => Promise<Doc | undefined>,
    // Opens the stream on the shards added to the cluster since.
    private readonly joinNewShards: () => Promise<void>,
    // Opens a shard's stream again after an invalidate of its own: the new cursor's reply.
    private readonly reopenShard: (stream: ShardStream, startAfter: Doc) => Promise<Doc>,
  ) {
    this.lastJoinMs = router.wallClock.now();
  }

  postBatchResumeToken(): Doc {
    return { _data: this.merge.postBatchResumeToken() };
  }

  async getMore(batchSize: number | undefined, maxTimeMS: number | undefined): Promise<{ docs: Doc[]; exhausted: boolean }> {
    const deadline = this.router.wallClock.now() + (maxTimeMS ?? DEFAULT_WAIT_MS);
    const docs = await this.collect(batchSize, deadline);
    if (this.ended) await this.close();
    return { docs, exhausted: this.ended };
  }

  // The first batch: what the shards' first batches let through, without waiting.
  async firstBatch(batchSize: number | undefined): Promise<Doc[]> {
    const docs = await this.release(batchSize === undefined ? Infinity : batchSize);
    if (this.ended) await this.close();
    return docs;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private async collect(batchSize: number | undefined, deadline: number): Promise<Doc[]> {
    const limit = batchSize === undefined || batchSize === 0 ? Infinity : batchSize;
    for (;;) {
      this.throwIfFailed();
      const docs = await this.release(limit);
      const left = deadline - this.router.wallClock.now();
      if (docs.length > 0 || this.ended || left <= 0) return docs;
      this.askShards(left);
      await Promise.race([...this.inFlight.values(), this.router.wallClock.sleep(Math.min(left, SHARD_WAIT_MS))]);
    }
  }

  private async release(limit: number): Promise<Doc[]> {
    const docs: Doc[] = [];
    while (docs.length < limit && !this.ended) {
      const next = this.merge.next();
      if (next === undefined) break;
      const { event, shard } = next;
      if (!this.filter.admit(event, tokenOf(event))) {
        // Another shard's invalidate was shown before (or the stream started after one): this
        // shard's stream goes on after its own, as the router's does.
        if (event.operationType === 'invalidate') this.restartAfter(shard, event._id as Doc);
        continue;
      }
      if (event.operationType === 'invalidate') this.ended = true;
      const shown = await this.finish(event);
      if (shown !== undefined) docs.push(shown);
    }
    if (this.merge.allEnded()) this.ended = true;
    if (!this.ended && docs.length === 0) this.filter.checkPassed(this.merge.postBatchResumeToken());
    return docs;
  }

  // A getMore on each shard that has nothing buffered and none in flight. A shard whose promise
  // holds back another shard's event is asked at once, without waiting: the getMore carries the
  // router's time, which has the event's, and an idle shard that answers for its set promises
  // past its clock (commit_horizon.ts), so it lets the event through with no write. A shard that
  // still holds it back (one whose set has other voters promises only its commit point) is made to
  // promise past it by a write it does not watch, which moves its commit point past the event.
  private askShards(left: number): void {
    this.lookForNewShards();
    const head = this.merge.head();
    const holding = new Set(head === undefined ? [] : this.merge.holdingBack(head.token));
    if (head === undefined) this.keepPromisesMoving();
    for (const shard of this.merge.idle()) {
      if (this.inFlight.has(shard)) continue;
      if (holding.has(shard)) {
        const ask = this.shardGetMore(shard, 1).then(() => {
          if (!this.stillHolds(shard)) return undefined;
          return this.heartbeat(shard).then(() => this.shardGetMore(shard, 1)).finally(() => this.heartbeats.delete(shard));
        });
        this.track(shard, ask);
      } else {
        this.track(shard, this.shardGetMore(shard, Math.max(1, Math.min(left, SHARD_WAIT_MS))));
      }
    }
  }

  private stillHolds(shard: string): boolean {
    const head = this.merge.head();
    return head !== undefined && this.merge.holdingBack(head.token).includes(shard);
  }

  private restartAfter(shard: string, token: Doc): void {
    this.merge.reopen(shard, tokenOf({ _id: token }));
    const stream = this.streams.get(shard)!;
    this.track(shard, this.reopenShard(stream, token).then((cursor) => {
      stream.id = cursor.id as Long;
      this.merge.add(shard, cursor.firstBatch as Doc[], String((cursor.postBatchResumeToken as Doc)._data), stream.id.isZero());
    }));
  }

  // At most once a second, and one look at a time; the shards it opens are asked from then on.
  private lookForNewShards(): void {
    const nowMs = this.router.wallClock.now();
    if (this.joining !== undefined || nowMs - this.lastJoinMs < NEW_SHARD_LOOK_MS) return;
    this.lastJoinMs = nowMs;
    this.joining = this.joinNewShards().catch((err: unknown) => {
      this.failure ??= err;
    }).finally(() => {
      this.joining = undefined;
    });
  }

  // While nothing is buffered, a shard whose promise follows only its commit point would keep the
  // router's postBatchResumeToken where it is while it has no writes: one whose promise is more than
  // a second behind the router's time gets a heartbeat write (at most one a second to each shard
  // from this router, whatever its streams). A shard that promises past its clock never falls so far.
  private keepPromisesMoving(): void {
    const now = this.router.clock.now();
    const behind = highWaterMarkToken(new Timestamp({ t: Math.max(0, now.high - 1), i: 0 }))._data;
    const nowMs = this.router.wallClock.now();
    let last = lastIdleBeat.get(this.router);
    if (last === undefined) lastIdleBeat.set(this.router, (last = new Map()));
    for (const shard of this.merge.holdingBack(behind)) {
      const { host } = this.streams.get(shard)!;
      if (nowMs - (last.get(host) ?? -Infinity) < IDLE_BEAT_MS) continue;
      last.set(host, nowMs);
      void this.heartbeat(shard).finally(() => this.heartbeats.delete(shard));
    }
  }

  private track(shard: string, ask: Promise<void>): void {
    const settled = ask.catch((err: unknown) => {
      this.failure ??= err;
    }).finally(() => this.inFlight.delete(shard));
    this.inFlight.set(shard, settled);
  }

  private heartbeat(shard: string): Promise<boolean> {
    let beat = this.heartbeats.get(shard);
    if (beat === undefined) {
      const { host } = this.streams.get(shard)!;
      const write = { update: HEARTBEAT_COLLECTION, updates: [{ q: { _id: 'router' }, u: { $inc: { n: 1 } }, upsert: true }], writeConcern: { w: 'majority', wtimeout: HEARTBEAT_WTIMEOUT_MS } };
      beat = this.router.client.command(host, 'config', write).then((r) => r.ok === 1, () => false);
      this.heartbeats.set(shard, beat);
    }
    return beat;
  }

  private async shardGetMore(shard: string, maxTimeMS: number): Promise<void> {
    const stream = this.streams.get(shard)!;
    if (stream.id.isZero()) return;
    const reply = checkOk(await this.router.client.command(stream.host, stream.db, { getMore: stream.id, collection: stream.collection, maxTimeMS }));
    const cursor = reply.cursor as Doc;
    stream.id = cursor.id as Long;
    this.merge.add(shard, cursor.nextBatch as Doc[], String((cursor.postBatchResumeToken as Doc)._data), stream.id.isZero());
  }

  private throwIfFailed(): void {
    if (this.failure === undefined) return;
    const err = this.failure;
    this.failure = undefined;
    this.ended = true;
    throw withResumableLabel(err);
  }

  async close(): Promise<void> {
    this.ended = true;
    await Promise.all([...this.streams.values()].map(async (s) => {
      if (s.id.isZero()) return;
      const id = s.id;
      s.id = Long.ZERO;
      await this.router.client.command(s.host, s.db, { killCursors: s.collection, cursors: [id] }).catch(() => undefined);
    }));
  }
}

const IDLE_BEAT_MS = 1000;
// A shard without a majority still answers its getMore after this: the stream waits, but is not stuck on the write.
const HEARTBEAT_WTIMEOUT_MS = 1000;
const NEW_SHARD_LOOK_MS = 1000;
const lastIdleBeat = new WeakMap<RouterServices, Map<string, number>>();

// Written on a shard to move its commit point: an internal database's writes are no events.
const HEARTBEAT_COLLECTION = 'changeStreamHeartbeats';

