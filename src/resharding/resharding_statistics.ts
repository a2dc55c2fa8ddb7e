import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { ReshardingProvenance } from './move_collection_request.js';
import type { AbortReason } from './resharding_coordinator_state_machine.js';

// The config server's cumulative counts of the reshardings its coordinators ran, by the command
// that started them: MongoDB 8.0's serverStatus shardingStatistics.resharding, .moveCollection and
// .unshardCollection (countStarted, countSucceeded, countFailed, countCanceled). In memory, from
// the process's start; a coordinator resumed at a step-up counts as started here.
interface Counts { countStarted: number; countSucceeded: number; countFailed: number; countCanceled: number }

const SECTIONS: Readonly<Record<ReshardingProvenance, string>> = { reshardCollection: 'resharding', moveCollection: 'moveCollection', unshardCollection: 'unshardCollection' };

export class ReshardingStatistics {
  private readonly counts = new Map<ReshardingProvenance, Counts>(
    (Object.keys(SECTIONS) as ReshardingProvenance[]).map((p) => [p, { countStarted: 0, countSucceeded: 0, countFailed: 0, countCanceled: 0 }]),
  );

  started(provenance: ReshardingProvenance): void {
    this.counts.get(provenance)!.countStarted++;
  }

  // How a coordinator ended: committed (no reason), aborted by its abort command (canceled), or
  // aborted by a failure. One stopped by a step-down has not ended: its next primary resumes it.
  ended(provenance: ReshardingProvenance, reason: AbortReason | undefined): void {
    if (reason?.code === ErrorCodes.InterruptedDueToReplStateChange) return;
    const c = this.counts.get(provenance)!;
    if (reason === undefined) c.countSucceeded++;
    else if (reason.code === ErrorCodes.ReshardCollectionAborted) c.countCanceled++;
    else c.countFailed++;
  }

  serverStatus(): Doc {
    return Object.fromEntries([...this.counts].map(([p, c]) => [SECTIONS[p], { ...c }]));
  }
}
