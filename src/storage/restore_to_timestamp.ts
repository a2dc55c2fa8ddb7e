import { BSON } from 'bson';
import type { CollectionEntry } from './catalog_entry.js';
import { catalogKey, catalogRangeEnd, catalogRangeStart, clockSecondsKey, indexSpace, nextIdKey, recordSpace } from './key_layout.js';
import { statsKey } from './collection_stats.js';
import { layoutVersionKey } from './layout_upgrade.js';
import type { KvStore, KvWriter } from './lmdb/kv_store.js';
import type { SnapshotView } from './snapshot_view.js';
import type { VersionHistory } from './version_history.js';

// A rollback without refetch (issue 31, "Beyond MongoDB"): the store put back to its state at a
// commit time T from the version history alone. Every key a commit after T changed takes the value
// it held at T (or goes), in one write transaction over all spaces; the history after T is dropped.
//
// What the history cannot give back is refused before anything is written: a time older than what
// is kept (a restart in between, the window or byte budget passed), a space dropped after T (a
// collection or index dropped: LMDB drops a space whole, nothing records its keys), a change made
// by a unit without a time after T. A collection or index created after T can be undone: every key
// of its spaces was written after T, so they end up empty, and are dropped.
//
// Collections `keep` names stay as they are (a member's local database: its vote, config and
// rollback id are not rolled back), as do the id allocator and the stored clock second, which
// only ever grow.

export interface RestoreOptions {
  // Namespaces whose collections are left as they are now.
  keep?: (ns: string) => boolean;
  // Runs inside the restore's transaction, after it: its writes commit with the restore (or it
  // throws and nothing does). They are not recorded in the history.
  alongside?: () => void;
}

export type RestoreResult = { restored: true; keys: number } | { restored: false; reason: string };

// What the engine hands over: its store and history, the catalog as of T, and the reload of what
// it keeps in memory of the catalog (done inside the transaction, undone if it aborts).
export interface RestoreTarget {
  kv: KvStore;
  history: VersionHistory | undefined;
  snapshotAt(at: bigint): SnapshotView;
  reloadCatalog(w: KvWriter): void;
  forgetCachedStats(): void;
}

class Refused extends Error {}

export function restoreToTimestamp(target: RestoreTarget, at: bigint, options: RestoreOptions, dryRun: boolean): RestoreResult {
  const { kv, history } = target;
  if (history === undefined) return refuse('this engine keeps no version history');
  if (at < history.coveredAfter) return refuse('the version history does not reach back to the restore time (a restart, or the history window or budget passed)');
  try {
    const plan = planRestore(target, history, at, options.keep ?? (() => false));
    if (dryRun) return { restored: true, keys: plan.changes.length };
    kv.writeOutsideHistory((w) => {
      for (const c of plan.changes) {
        const space = c.space === kv.mainSpaceName ? w : plan.restored.has(c.space) || plan.emptied.has(c.space) ? w.space(c.space) : undefined;
        if (space === undefined || (c.space === kv.mainSpaceName && plan.keptMainKeys.has(c.key.toString('latin1')))) continue;
        if (c.before === undefined) space.remove(c.key);
        else space.put(c.key, c.before);
      }
      for (const name of plan.emptied) {
        // A space made after T holds only keys written after T: the restore removed them all.
        for (const entry of w.space(name).range(EMPTY, EMPTY, { limit: 1 })) throw new Refused(`space ${name}, created after the restore time, still holds ${entry.key.toString('hex')}`);
        w.dropSpace(name);
      }
      target.reloadCatalog(w);
      options.alongside?.();
    });
    history.truncateAfter(at);
    target.forgetCachedStats();
    return { restored: true, keys: plan.changes.length };
  } catch (err) {
    if (err instanceof Refused) return refuse(err.message);
    throw err;
  }
}

interface Plan {
  changes: ReturnType<VersionHistory['valuesAt']>;
  // Spaces that existed at T and are restored; spaces made since, to be dropped once emptied.
  restored: Set<string>;
  emptied: Set<string>;
  keptMainKeys: Set<string>;
}

function planRestore(target: RestoreTarget, history: VersionHistory, at: bigint, keep: (ns: string) => boolean): Plan {
  const { kv } = target;
  const view = target.snapshotAt(at);
  let then: Map<number, CollectionEntry>;
  try {
    then = catalog(() => kv.withView(view, () => [...kv.range(catalogRangeStart, catalogRangeEnd)]));
  } finally {
    view.release();
  }
  const now = catalog(() => [...kv.range(catalogRangeStart, catalogRangeEnd)]);
  const keptMainKeys = new Set([nextIdKey, clockSecondsKey, layoutVersionKey].map(latin1));
  const keptSpaces = new Set<string>();
  for (const entry of [...then.values(), ...now.values()]) {
    if (!keep(entry.ns)) continue;
    keptMainKeys.add(latin1(catalogKey(entry.ns)));
    keptMainKeys.add(latin1(statsKey(Number(entry.id))));
    for (const s of spacesOf(entry)) keptSpaces.add(s);
  }
  const restored = new Set<string>();
  for (const entry of then.values()) {
    if (keep(entry.ns)) continue;
    const current = now.get(Number(entry.id));
    if (current === undefined) throw new Refused(`collection ${entry.ns} was dropped after the restore time`);
    if (keep(current.ns)) throw new Refused(`collection ${entry.ns} was renamed to ${current.ns} after the restore time`);
    const indexes = new Set(current.indexes.map((i) => Number(i.id)));
    const dropped = entry.indexes.find((i) => !indexes.has(Number(i.id)));
    if (dropped !== undefined) throw new Refused(`index ${String(dropped.spec.name)} of ${entry.ns} was dropped after the restore time`);
    for (const s of spacesOf(entry)) restored.add(s);
  }
  const emptied = new Set<string>();
  for (const entry of now.values()) {
    const before = then.get(Number(entry.id));
    if (keep(entry.ns)) {
      if (before !== undefined && !keep(before.ns)) throw new Refused(`collection ${before.ns} was renamed to ${entry.ns} after the restore time`);
      continue;
    }
    for (const s of spacesOf(entry)) if (!restored.has(s)) emptied.add(s);
  }
  for (const u of history.unrecordedSince(at)) {
    const space = [...u.spaces].find((s) => !keptSpaces.has(s));
    const key = u.mainKeys.find((k) => !keptMainKeys.has(latin1(k)));
    if (space !== undefined || key !== undefined) throw new Refused(`a change after the restore time was made without a commit time (${space ?? `main space key ${key!.toString('hex')}`})`);
  }
  return { changes: history.valuesAt(at), restored, emptied, keptMainKeys };
}

function catalog(read: () => { value: Buffer }[]): Map<number, CollectionEntry> {
  const out = new Map<number, CollectionEntry>();
  for (const { value } of read()) {
    const entry = BSON.deserialize(value) as unknown as CollectionEntry;
    out.set(Number(entry.id), entry);
  }
  return out;
}

function spacesOf(entry: CollectionEntry): string[] {
  return [recordSpace(Number(entry.id)), ...entry.indexes.map((i) => indexSpace(Number(i.id)))];
}

function latin1(key: Buffer): string {
  return key.toString('latin1');
}

function refuse(reason: string): RestoreResult {
  return { restored: false, reason };
}

const EMPTY = Buffer.alloc(0);
