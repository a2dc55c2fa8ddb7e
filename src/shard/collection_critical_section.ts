import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { valuesEqual } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { CriticalSection } from './critical_section.js';

// MongoDB's collection critical sections taken for a DDL (ShardingRecoveryService): each is
// persisted in config.collection_critical_sections ({_id: nss, reason, blockReads}) before it is
// taken and deleted after it is released, and taken again when the shard starts, so a shard that
// restarts in the middle of a DDL keeps the collection blocked until the coordinator releases it.
// The gate is the migration's (critical_section.ts): a section held by a migration is waited out
// before a DDL takes it.
export const COLLECTION_CRITICAL_SECTIONS_NS = 'config.collection_critical_sections';

interface Holder {
  readonly reason: Doc;
  readonly blockReads: boolean;
}

export class CollectionCriticalSections {
  private readonly holders = new Map<string, Holder>();

  constructor(private readonly cs: CriticalSection, private readonly local: LocalCollections) {}

  // Startup: takes again every section the shard held when it stopped.
  restore(): string[] {
    const restored: string[] = [];
    for (const doc of this.local.find(COLLECTION_CRITICAL_SECTIONS_NS)) {
      const nss = String(doc._id);
      this.take(nss, { reason: doc.reason as Doc, blockReads: doc.blockReads === true });
      restored.push(nss);
    }
    return restored;
  }

  // Blocks writes (and reads with blockReads); idempotent for the same reason, refused for another.
  async enter(nss: string, reason: Doc, blockReads: boolean): Promise<void> {
    const holder = this.holders.get(nss);
    if (holder !== undefined && !valuesEqual(holder.reason, reason)) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress,
        `the critical section of ${nss} is held for another operation: ${JSON.stringify(holder.reason)}`);
    }
    // A migration's section ends on its own; a DDL does not share it.
    while (holder === undefined && this.cs.isHeld(nss)) await this.cs.waitFor(nss, 'write');
    if (holder !== undefined && (holder.blockReads || !blockReads)) return;
    const next = { reason, blockReads };
    this.local.write((w) => w.update(COLLECTION_CRITICAL_SECTIONS_NS, { _id: nss }, { _id: nss, ...next }, { upsert: true }));
    this.take(nss, next);
  }

  // Releases the section if this reason holds it (idempotent: a released one is released).
  exit(nss: string, reason: Doc): void {
    const holder = this.holders.get(nss);
    if (holder === undefined) return;
    if (!valuesEqual(holder.reason, reason)) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress,
        `the critical section of ${nss} is held for another operation: ${JSON.stringify(holder.reason)}`);
    }
    this.local.write((w) => w.delete(COLLECTION_CRITICAL_SECTIONS_NS, { _id: nss }));
    this.holders.delete(nss);
    this.cs.exit(nss);
  }

  private take(nss: string, holder: Holder): void {
    this.holders.set(nss, holder);
    if (holder.blockReads) this.cs.enterForReads(nss);
    else this.cs.enter(nss);
  }
}
