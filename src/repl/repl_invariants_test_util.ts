import { replEffectClass, type ReplEffect } from './effects.js';
import { entryOpTime, type OplogEntry } from './oplog_entry.js';
import { compareOpTime, formatOpTime, opTimeEquals, type OpTime } from './op_time.js';
import type { TopologyState } from './topology_state.js';

const key = (e: OplogEntry): string => `${e.t}:${e.ts}`;
const content = (e: OplogEntry): string => JSON.stringify([e.op, e.o]);

// The safety properties of the replica set, checked on every member's step as the explorer runs
// them: at most one primary per term; log matching (one optime, one entry, on every member); every
// majority-committed entry is on every later primary; no committed entry is ever rolled back; and
// the driver contract of each step (persist before send, a commit point the member holds).
export class ReplInvariants {
  readonly violations: string[] = [];
  private readonly entries = new Map<string, string>();
  private readonly committed = new Map<string, string>();
  private readonly committedAt = new Map<string, OpTime>();
  private readonly primaryOfTerm = new Map<number, number>();

  committedCount(): number {
    return this.committed.size;
  }

  observe(member: number, before: TopologyState | null, after: TopologyState, effects: readonly ReplEffect[], where: string): void {
    const fail = (what: string): void => {
      this.violations.push(`${where}: member ${member}: ${what}`);
    };
    const order = { persist: 0, local: 1, send: 2 } as const;
    for (let i = 1; i < effects.length; i++) {
      if (order[replEffectClass(effects[i - 1]!)] > order[replEffectClass(effects[i]!)]) fail(`effect ${effects[i]!.type} after ${effects[i - 1]!.type}: persist must come before send`);
    }
    for (const e of effects) {
      if (e.type === 'appendOplog') this.checkLogMatching(e.entries, fail);
      else if (e.type === 'truncateOplogAfter') this.checkTruncation(before, e.opTime, fail);
      else if (e.type === 'rollbackRefused') fail(`rollback refused: ${e.reason}`);
      else if (e.type === 'commitPointAdvanced') this.noteCommitted(after, fail);
      else if (e.type === 'memberStateChanged' && e.state === 'PRIMARY' && !e.writable) this.checkNewPrimary(member, after, fail);
    }
  }

  private checkLogMatching(entries: readonly OplogEntry[], fail: (what: string) => void): void {
    for (const e of entries) {
      const seen = this.entries.get(key(e));
      if (seen === undefined) this.entries.set(key(e), content(e));
      else if (seen !== content(e)) fail(`log matching: two entries at ${formatOpTime(entryOpTime(e))}: ${seen} and ${content(e)}`);
    }
  }

  private checkTruncation(before: TopologyState | null, after: { ts: number; t: number }, fail: (what: string) => void): void {
    for (const e of before?.oplog ?? []) {
      if (compareOpTime(entryOpTime(e), after) > 0 && this.committed.has(key(e))) fail(`rolled back the majority-committed entry ${formatOpTime(entryOpTime(e))}`);
    }
  }

  private noteCommitted(after: TopologyState, fail: (what: string) => void): void {
    const point = after.lastCommittedOpTime;
    if (!after.oplog.some((e) => opTimeEquals(entryOpTime(e), point))) fail(`commit point ${formatOpTime(point)} is not an entry it holds`);
    for (const e of after.oplog) {
      if (compareOpTime(entryOpTime(e), point) > 0) break;
      const seen = this.committed.get(key(e));
      if (seen === undefined) {
        this.committed.set(key(e), content(e));
        this.committedAt.set(key(e), entryOpTime(e));
      } else if (seen !== content(e)) fail(`two committed entries at ${formatOpTime(entryOpTime(e))}`);
    }
  }

  private checkNewPrimary(member: number, after: TopologyState, fail: (what: string) => void): void {
    const other = this.primaryOfTerm.get(after.term);
    if (other !== undefined && other !== member) fail(`second primary in term ${after.term} (member ${other} was primary in it)`);
    this.primaryOfTerm.set(after.term, member);
    // A capped or resynced oplog begins later; what came before it is in the data it holds.
    const held = new Set(after.oplog.map(key));
    const oldest = after.oplog[0];
    for (const [k, opTime] of this.committedAt) {
      if (oldest !== undefined && compareOpTime(opTime, entryOpTime(oldest)) < 0) continue;
      if (!held.has(k)) fail(`new primary of term ${after.term} lacks the majority-committed entry ${k}`);
    }
  }
}
