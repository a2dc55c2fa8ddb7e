import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import type { CriticalSection } from '../shard/critical_section.js';
import type { Placement, ShardMetadata } from '../shard/shard_metadata.js';

// Which expired documents of a collection the TTL monitor may delete now. On a shard they are
// the ones it owns, as MongoDB's monitor deletes with an IGNORED shard version so that orphans
// are left to the range deleter: a range deletion task counts its orphans and a migration's
// recipient its received documents, and neither count may change under them. Deleting an owned
// document goes through the write path like any delete, so a migration of its range sends the
// deletion on (the donor's op observer captures it).
export type TtlDeletionScope =
  | { readonly kind: 'all' }
  | { readonly kind: 'skip'; readonly reason: string }
  // `fields`: what `owns` reads of a document (the shard key).
  | { readonly kind: 'owned'; readonly fields: readonly string[]; owns(doc: Doc): boolean };

export interface ShardFacts {
  // Undefined on a node that is not (yet) a cluster's shard: it owns all it holds.
  readonly shardName: string | undefined;
  // The collection's critical section or its database's (a migration or movePrimary committing).
  readonly criticalSectionHeld: boolean;
  readonly placement: Placement;
}

// The scope, and whether the shard should load the collection's filtering metadata (MongoDB
// refreshes asynchronously when its TTL delete meets unknown metadata, and tries again next pass).
export function decideDeletionScope(facts: ShardFacts): { scope: TtlDeletionScope; refresh: boolean } {
  if (facts.shardName === undefined) return { scope: { kind: 'all' }, refresh: false };
  // A deletion after the donor's last catch-up would never reach the recipient.
  if (facts.criticalSectionHeld) return { scope: { kind: 'skip', reason: 'the critical section is held' }, refresh: false };
  const { placement } = facts;
  switch (placement.kind) {
    case 'unknown': return { scope: { kind: 'skip', reason: 'the filtering metadata is unknown' }, refresh: true };
    case 'recovering': return { scope: { kind: 'skip', reason: 'a migration is being recovered' }, refresh: false };
    case 'unsharded': return { scope: { kind: 'all' }, refresh: false };
    case 'sharded': {
      const { ownership } = placement;
      if (ownership.ownsEverything()) return { scope: { kind: 'all' }, refresh: false };
      return { scope: { kind: 'owned', fields: ownership.pattern.fields, owns: (doc) => ownership.ownsDocument(doc) }, refresh: false };
    }
  }
}

export interface ShardServices {
  readonly role: 'shard' | 'config';
  shardName(): string | undefined;
  readonly criticalSection: CriticalSection;
  readonly metadata: ShardMetadata;
  readonly logger: Logger;
}

// The scope of each collection on this node, loading unknown filtering metadata in the background.
export function ttlDeletionScopes(node: ShardServices): (ns: string) => TtlDeletionScope {
  // One refresh per collection at a time, however often passes come.
  const refreshing = new Set<string>();
  return (ns) => {
    if (node.role === 'config') return { kind: 'all' };
    const db = ns.slice(0, ns.indexOf('.'));
    const { scope, refresh } = decideDeletionScope({
      shardName: node.shardName(),
      criticalSectionHeld: node.criticalSection.isHeld(ns) || node.criticalSection.isHeld(db),
      placement: node.metadata.placement(ns),
    });
    if (refresh && !refreshing.has(ns)) {
      refreshing.add(ns);
      node.metadata.refreshCollection(ns)
        .catch((err: unknown) => node.logger.warn({ c: 'INDEX', ns, err }, 'TTL monitor could not load the filtering metadata'))
        .finally(() => refreshing.delete(ns));
    }
    return scope;
  };
}
