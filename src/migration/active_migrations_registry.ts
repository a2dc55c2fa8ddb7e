import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { assert, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { formatRange, type ChunkRange } from '../catalog/chunk_range.js';

// One migration per shard at a time, as donor or recipient (MongoDB's ActiveMigrationsRegistry).
// The balancer does not track which shards are busy; shards refuse what they cannot take:
//   donate || same donate         the second joins the first and gets its outcome
//   donate || anything else       ConflictingOperationInProgress
//   receive || donate or receive  ConflictingOperationInProgress
// In memory only: after a restart the driver registers every unresolved coordinator document
// (as a donation) before it accepts migrations, so recovery and new migrations never overlap.
export interface DonateChunkRequest {
  readonly nss: string;
  readonly range: ChunkRange;
  readonly fromShardId: string;
  readonly toShardId: string;
  readonly waitForDelete: boolean;
  readonly forceJumbo: boolean;
}

export type DonationOutcome = { readonly ok: true } | { readonly ok: false; readonly error: MongoError };

// 'execute': the caller runs the migration and must call signalComplete exactly once.
// 'join': an identical migration is running; the caller waits for its outcome.
export type ScopedDonateChunk =
  | { readonly mode: 'execute'; signalComplete(outcome: DonationOutcome): void }
  | { readonly mode: 'join'; readonly completion: Promise<DonationOutcome> };

export interface ScopedReceiveChunk {
  release(): void;
}

interface ActiveDonation {
  readonly request: DonateChunkRequest;
  readonly completion: Promise<DonationOutcome>;
}

export interface ActiveReceive {
  readonly nss: string;
  readonly range: ChunkRange;
  readonly fromShardId: string;
}

export class ActiveMigrationsRegistry {
  private donation: ActiveDonation | undefined;
  private receive: ActiveReceive | undefined;
  private readonly idleWaiters: (() => void)[] = [];

  registerDonateChunk(request: DonateChunkRequest): ScopedDonateChunk {
    if (this.receive !== undefined) throw receivingError(this.receive);
    if (this.donation !== undefined) {
      if (sameDonation(this.donation.request, request)) return { mode: 'join', completion: this.donation.completion };
      throw donatingError(this.donation.request);
    }
    let resolve!: (outcome: DonationOutcome) => void;
    const donation: ActiveDonation = { request, completion: new Promise((r) => { resolve = r; }) };
    this.donation = donation;
    let signalled = false;
    return {
      mode: 'execute',
      signalComplete: (outcome) => {
        assert(!signalled, 'a donation completes once');
        signalled = true;
        this.donation = undefined;
        resolve(outcome);
        this.wakeIfIdle();
      },
    };
  }

  registerReceiveChunk(nss: string, range: ChunkRange, fromShardId: string): ScopedReceiveChunk {
    if (this.receive !== undefined) throw receivingError(this.receive);
    if (this.donation !== undefined) throw donatingError(this.donation.request);
    const receive: ActiveReceive = { nss, range, fromShardId };
    this.receive = receive;
    return {
      release: () => {
        if (this.receive === receive) this.receive = undefined;
        this.wakeIfIdle();
      },
    };
  }

  // Resolves once no migration is registered (a step-down waits for the interrupted ones to end
  // before the next step-up recovers them).
  idle(): Promise<void> {
    if (this.donation === undefined && this.receive === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIfIdle(): void {
    if (this.donation !== undefined || this.receive !== undefined) return;
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  // The migration in flight, for currentOp and serverStatus.
  activeDonation(): DonateChunkRequest | undefined {
    return this.donation?.request;
  }

  activeReceive(): ActiveReceive | undefined {
    return this.receive;
  }
}

function sameDonation(a: DonateChunkRequest, b: DonateChunkRequest): boolean {
  return a.nss === b.nss && a.fromShardId === b.fromShardId && a.toShardId === b.toShardId && a.waitForDelete === b.waitForDelete &&
    a.forceJumbo === b.forceJumbo && compareValues(a.range.min, b.range.min) === 0 && compareValues(a.range.max, b.range.max) === 0;
}

function donatingError(request: DonateChunkRequest): MongoError {
  return new MongoError(ErrorCodes.ConflictingOperationInProgress,
    `Unable to start new balancer operation because this shard is currently donating range 'min: ${formatValue(request.range.min)} - max: ${formatValue(request.range.max)}' for namespace ${request.nss} to shard ${request.toShardId}`);
}

function receivingError(receive: ActiveReceive): MongoError {
  return new MongoError(ErrorCodes.ConflictingOperationInProgress,
    `Unable to start new balancer operation because this shard is currently receiving chunk ${formatRange(receive.range)} for namespace ${receive.nss} from ${receive.fromShardId}`);
}
