import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { CriticalSection } from './critical_section.js';

// The database-level critical section a movePrimary donor and recipient or a dropDatabase
// coordinator holds (MongoDB's DatabaseShardingState critical section): the per-namespace gate of
// critical_section.ts, keyed by the bare database name (a collection key always has a dot, so the
// two never meet). Only requests that carry a
// databaseVersion are held, which is every routed request for an unsharded collection and for the
// database's catalog; they wait, then check their version, and after the commit the donor has
// refreshed and answers StaleDbVersion, so the router goes to the new primary.

// Commands that only read; every other versioned command counts as a write.
const READS = new Set(['find', 'count', 'distinct', 'listIndexes', 'listCollections', 'collStats', 'dbStats', 'explain']);

export function databaseCriticalSectionKind(name: string, cmd: Doc): 'read' | 'write' {
  if (name === 'aggregate') {
    const pipeline = Array.isArray(cmd.pipeline) ? cmd.pipeline : [];
    const writes = pipeline.some((s) => s !== null && typeof s === 'object' && ('$out' in s || '$merge' in s));
    return writes ? 'write' : 'read';
  }
  return READS.has(name) ? 'read' : 'write';
}

// Called by the dispatcher before the version check of every request: what the request waits for,
// undefined when the database's section does not hold it.
export function databaseCriticalSectionWait(cs: CriticalSection, name: string, db: string, cmd: Doc): Promise<void> | undefined {
  if (cmd.databaseVersion === undefined) return undefined;
  const kind = databaseCriticalSectionKind(name, cmd);
  return cs.blocks(db, kind) ? cs.waitFor(db, kind) : undefined;
}

// The section is persisted before it is taken and deleted after it is released (as MongoDB
// persists its critical sections), so a shard that restarts mid-move comes back with the database
// still blocked: a donor cannot take writes the commit would leave behind, nor a recipient requests
// meant for the new primary before the donor has cleaned up.
export const DATABASE_CRITICAL_SECTIONS_NS = 'config.movePrimaryCriticalSections';

// What a shard knows of its databases' versions (shard_metadata.ts).
interface DatabaseVersionCache {
  forgetDatabase(db: string): void;
  refreshDatabase(db: string): Promise<void>;
}

interface Holder {
  reason: string;
  blockReads: boolean;
}

export class DatabaseCriticalSections {
  private readonly holders = new Map<string, Holder>();

  constructor(private readonly cs: CriticalSection, private readonly local: LocalCollections) {}

  // Startup: takes again every section the node held when it stopped.
  restore(): string[] {
    const restored: string[] = [];
    for (const doc of this.local.find(DATABASE_CRITICAL_SECTIONS_NS)) {
      const db = String(doc._id);
      this.take(db, { reason: String(doc.reason), blockReads: doc.blockReads === true });
      restored.push(db);
    }
    return restored;
  }

  // Blocks the database's writes; idempotent for the same reason.
  enter(db: string, reason: string): void {
    const holder = this.holders.get(db);
    if (holder !== undefined && holder.reason !== reason) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `the critical section of database ${db} is held by another operation (${holder.reason})`);
    }
    if (holder !== undefined) return;
    this.persist(db, { reason, blockReads: false });
    this.take(db, { reason, blockReads: false });
  }

  // Blocks reads too; only while the section taken with this reason is held.
  blockReads(db: string, reason: string): void {
    const holder = this.holders.get(db);
    if (holder === undefined || holder.reason !== reason || !this.cs.isHeld(db)) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `the critical section of database ${db} is not held for ${reason}`);
    }
    this.persist(db, { reason, blockReads: true });
    this.take(db, { reason, blockReads: true });
  }

  // Reads and writes held at once: a dropDatabase coordinator, a movePrimary recipient.
  enterBlockingReads(db: string, reason: string): void {
    this.enter(db, reason);
    this.blockReads(db, reason);
  }

  // Releases the section once `metadata` has reloaded the database's version, so that the requests
  // it held check theirs against what the DDL left (not reloaded is safe too: they then reload it
  // themselves); true when this reason held it.
  async exitAfterRefresh(db: string, reason: string, metadata: DatabaseVersionCache): Promise<boolean> {
    metadata.forgetDatabase(db);
    await metadata.refreshDatabase(db).catch(() => undefined);
    return this.exit(db, reason);
  }

  // Releases the section if this reason holds it; true when it did.
  exit(db: string, reason: string): boolean {
    if (this.holders.get(db)?.reason !== reason) return false;
    this.local.write((w) => w.delete(DATABASE_CRITICAL_SECTIONS_NS, { _id: db }));
    this.holders.delete(db);
    this.cs.exit(db);
    return true;
  }

  holder(db: string): string | undefined {
    return this.holders.get(db)?.reason;
  }

  private persist(db: string, holder: Holder): void {
    this.local.write((w) => w.update(DATABASE_CRITICAL_SECTIONS_NS, { _id: db }, { _id: db, ...holder }, { upsert: true }));
  }

  private take(db: string, holder: Holder): void {
    this.holders.set(db, holder);
    if (holder.blockReads) this.cs.enterForReads(db);
    else this.cs.enter(db);
  }
}

// One registry per node, found from the node's critical section.
const registries = new WeakMap<CriticalSection, DatabaseCriticalSections>();

export function databaseCriticalSections(node: { sharding: { criticalSection: CriticalSection }; local: LocalCollections }): DatabaseCriticalSections {
  const cs = node.sharding.criticalSection;
  let registry = registries.get(cs);
  if (!registry) {
    registry = new DatabaseCriticalSections(cs, node.local);
    registries.set(cs, registry);
  }
  return registry;
}
