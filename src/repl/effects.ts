import type { LastVote } from './last_vote.js';
import type { MemberState } from './member_state.js';
import type { ReplMessage } from './messages.js';
import type { OpTime } from './op_time.js';
import type { OplogEntry } from './oplog_entry.js';

// What the topology coordinator asks its driver to do. A step's effects come in three classes and
// always in this order, persist before send as in etcd's raft:
//   persist  durable before the next effect starts (local.replset.election, local.oplog.rs); a
//            failed persist is fatal, and a restart starts from what is on disk.
//   local    what the node learns or tells its clients (state changes, write outcomes).
//   send     a message to another member, fire and forget: answers come back as events.
// So no member ever hears of a vote, a term or an entry that a crash could make this member forget.
export type ReplEffect =
  | { readonly type: 'persistLastVote'; readonly lastVote: LastVote }
  | { readonly type: 'appendOplog'; readonly entries: readonly OplogEntry[] }
  // Rollback: everything after `opTime` goes (the common point stays).
  | { readonly type: 'truncateOplogAfter'; readonly opTime: OpTime }
  | { readonly type: 'memberStateChanged'; readonly state: MemberState; readonly term: number; readonly writable: boolean }
  | { readonly type: 'commitPointAdvanced'; readonly opTime: OpTime }
  | { readonly type: 'writeAccepted'; readonly opTime: OpTime }
  | { readonly type: 'writeRejected'; readonly code: 10107; readonly codeName: 'NotWritablePrimary' }
  // The common point of a rollback lies below the commit point: MongoDB stops the process there
  // rather than undo a majority-committed write, and so does the driver.
  | { readonly type: 'rollbackRefused'; readonly reason: string }
  // No sync source's oplog reaches back to this member's: it drops its data and runs initial sync.
  | { readonly type: 'resyncNeeded'; readonly reason: string }
  | { readonly type: 'send'; readonly to: number; readonly message: ReplMessage };

export type ReplEffectClass = 'persist' | 'local' | 'send';

const CLASSES: Record<ReplEffect['type'], ReplEffectClass> = {
  persistLastVote: 'persist',
  appendOplog: 'persist',
  truncateOplogAfter: 'persist',
  memberStateChanged: 'local',
  commitPointAdvanced: 'local',
  writeAccepted: 'local',
  writeRejected: 'local',
  rollbackRefused: 'local',
  resyncNeeded: 'local',
  send: 'send',
};

export function replEffectClass(e: ReplEffect): ReplEffectClass {
  return CLASSES[e.type];
}

// Collects one step's effects; `list` hands them out in class order, each class in the order the
// step produced it.
export class Effects {
  private readonly byClass: Record<ReplEffectClass, ReplEffect[]> = { persist: [], local: [], send: [] };

  add(e: ReplEffect): void {
    this.byClass[replEffectClass(e)].push(e);
  }

  send(to: number, message: ReplMessage): void {
    this.add({ type: 'send', to, message });
  }

  list(): readonly ReplEffect[] {
    return [...this.byClass.persist, ...this.byClass.local, ...this.byClass.send];
  }
}
