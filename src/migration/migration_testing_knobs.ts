import type { DonorEffect } from './donor_effects.js';
import type { RecipientEffect } from './recipient_effects.js';

// An effect a driver is about to run, and which driver runs it.
export type MigrationDriverEffect =
  | { readonly driver: 'donor'; readonly effect: DonorEffect }
  | { readonly driver: 'recipient'; readonly effect: RecipientEffect };

// Hooks a test sets on a shard's migration drivers (CockroachDB's testing knobs); a process sets
// none, and then the drivers run exactly as without them.
export interface MigrationTestingKnobs {
  // Called before every effect a driver runs, in the order they run; the driver waits for the
  // promise returned, if any. A simulator crashes a node between two effects by returning one
  // that never settles and dropping the node.
  beforeEffect?(next: MigrationDriverEffect): Promise<void> | undefined;
}
