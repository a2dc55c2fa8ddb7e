import { deserializeDocument, type Doc } from '../bson/values.js';
import { COLLECTION_CRITICAL_SECTIONS_NS } from './collection_critical_section.js';
import type { ShardMetadata } from './shard_metadata.js';
import { parseShardIdentity, SHARD_IDENTITY_ID, SHARD_IDENTITY_NS, type ShardingState } from './sharding_state.js';

// The documents a shard's primary writes when a collection's placement on it changes: a
// migration's decision and its range deletion task (src/migration names them; a shard may not
// import it), a DDL's critical section (keyed by nss).
const MIGRATION_COORDINATORS_NS = 'config.migrationCoordinators';
const RANGE_DELETIONS_NS = 'config.rangeDeletions';

// MongoDB's ShardServerOpObserver, the part a replica-set secondary needs: it learns what its
// primary decided from the writes it applies, since nobody sends it _addShard or
// _flushRoutingTableCacheUpdates. The shard identity makes it a shard (so routed reads on it are
// version-checked and filtered); a placement change of a collection makes it forget that
// collection's filtering metadata, so its next versioned read reloads it from the config server
// instead of filtering by ownership its primary already gave away. On a primary the code that
// writes these documents keeps the metadata itself, and forgetting under it would race that.
export class ShardingOpObserver {
  constructor(
    private readonly state: ShardingState,
    private readonly metadata: ShardMetadata,
    private readonly isWritablePrimary: () => boolean,
  ) {}

  onInsert(_w: unknown, ns: string, doc: { readonly bytes: Buffer }): void {
    this.observe(ns, doc.bytes);
  }

  onUpdate(_w: unknown, ns: string, _before: Doc, _after: Doc, bytes: Buffer): void {
    this.observe(ns, bytes);
  }

  onDelete(_w: unknown, ns: string, before: Doc): void {
    if (ns === COLLECTION_CRITICAL_SECTIONS_NS && typeof before._id === 'string' && !this.isWritablePrimary()) this.metadata.forget(before._id);
  }

  private observe(ns: string, bytes: Buffer): void {
    if (ns === SHARD_IDENTITY_NS) {
      const doc = deserializeDocument(bytes);
      if (doc._id !== SHARD_IDENTITY_ID) return;
      const identity = parseShardIdentity(doc);
      if (identity !== undefined) this.state.adopt(identity);
      return;
    }
    if (ns !== MIGRATION_COORDINATORS_NS && ns !== RANGE_DELETIONS_NS && ns !== COLLECTION_CRITICAL_SECTIONS_NS) return;
    if (this.isWritablePrimary()) return;
    const doc = deserializeDocument(bytes);
    const nss = ns === COLLECTION_CRITICAL_SECTIONS_NS ? doc._id : doc.nss;
    if (typeof nss === 'string') this.metadata.forget(nss);
  }
}
