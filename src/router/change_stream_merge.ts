import type { Doc } from '../bson/values.js';

// The merge of shard change streams by resume token (MongoDB's AsyncResultsMerger for change
// streams). Each shard's postBatchResumeToken is its promise: it will send no event with a token
// at or below it. An event is released only when every other shard has promised as much or holds
// a later event, so the merged stream is in token order whatever the shards' speeds. Tokens
// compare as their `_data` strings.
interface ShardState {
  buffered: Doc[];
  promised: string;
  // Its cursor is closed (after an invalidate): it promises everything.
  ended: boolean;
}

export class ChangeStreamMerge {
  private readonly shards = new Map<string, ShardState>();
  private released: string;

  constructor(start: string) {
    this.released = start;
  }

  addShard(shard: string, promised: string): void {
    this.shards.set(shard, { buffered: [], promised, ended: false });
  }

  // A shard's batch: its events, in its order, and the token it promises after them.
  add(shard: string, events: Doc[], promised: string, ended: boolean): void {
    const state = this.shards.get(shard)!;
    state.buffered.push(...events);
    if (promised > state.promised) state.promised = promised;
    state.ended ||= ended;
  }

  // The next event every shard lets through, taken out, with its shard; undefined when none may go yet.
  next(): { event: Doc; shard: string } | undefined {
    const head = this.head();
    if (head === undefined || this.holdingBack(head.token).length > 0) return undefined;
    const event = this.shards.get(head.shard)!.buffered.shift()!;
    if (head.token > this.released) this.released = head.token;
    return { event, shard: head.shard };
  }

  // A shard whose cursor ended is opened again after `token`: until it answers it promises that much.
  reopen(shard: string, token: string): void {
    const state = this.shards.get(shard)!;
    state.ended = false;
    if (token > state.promised) state.promised = token;
  }

  // The lowest buffered event, with its shard and token.
  head(): { shard: string; token: string } | undefined {
    let best: { shard: string; token: string } | undefined;
    for (const [shard, state] of this.shards) {
      const first = state.buffered[0];
      if (first === undefined) continue;
      const token = tokenOf(first);
      if (best === undefined || token < best.token) best = { shard, token };
    }
    return best;
  }

  // The shards with nothing buffered whose promise is below `token`: what an event at `token` waits for.
  holdingBack(token: string): string[] {
    const out: string[] = [];
    for (const [shard, state] of this.shards) {
      if (!state.ended && state.buffered.length === 0 && state.promised < token) out.push(shard);
    }
    return out;
  }

  // The shards that need a getMore: their buffer is empty and their cursor open.
  idle(): string[] {
    return [...this.shards].filter(([, s]) => !s.ended && s.buffered.length === 0).map(([shard]) => shard);
  }

  allEnded(): boolean {
    return [...this.shards.values()].every((s) => s.ended && s.buffered.length === 0);
  }

  // The router's postBatchResumeToken: the last event released while any is still buffered,
  // otherwise the lowest promise of the open shards (nothing below it is still to come); never
  // going back.
  postBatchResumeToken(): string {
    const states = [...this.shards.values()];
    if (states.every((s) => s.buffered.length === 0)) {
      const open = states.filter((s) => !s.ended).map((s) => s.promised);
      if (open.length > 0) {
        const lowest = open.reduce((a, b) => (a < b ? a : b));
        if (lowest > this.released) this.released = lowest;
      }
    }
    return this.released;
  }
}

export function tokenOf(event: Doc): string {
  return String((event._id as Doc)._data);
}
