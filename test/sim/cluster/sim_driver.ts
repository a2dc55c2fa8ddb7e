import { Long, UUID } from 'bson';
import { MongoError } from '../../../src/base/errors.js';
import type { Doc } from '../../../src/bson/values.js';
import type { Network } from '../../../src/wire/network.js';

// What a driver retries (the retryable writes and reads specifications' list, and a StaleConfig
// that reached the client): the same command, with the same lsid and txnNumber.
const RETRYABLE_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13388, 13435, 13436, 150, 134]);

export type Outcome = { readonly reply: Doc; readonly error?: undefined } | { readonly error: MongoError; readonly reply?: undefined };

// A write's fate as its client knows it: acknowledged, refused for certain, or unknown (an
// attempt may have applied it and no answer said so).
export type WriteFate = 'acked' | 'refused' | 'unknown';

export function retryable(outcome: Outcome): boolean {
  const { reply } = outcome;
  if (reply === undefined) return true;
  const labels = Array.isArray(reply.errorLabels) ? reply.errorLabels : [];
  if (labels.includes('RetryableWriteError')) return true;
  if (reply.ok !== 1 && RETRYABLE_CODES.has(Number(reply.code))) return true;
  const writeErrors = Array.isArray(reply.writeErrors) ? (reply.writeErrors as Doc[]) : [];
  return writeErrors.some((e) => RETRYABLE_CODES.has(Number(e.code)));
}

export function succeeded(outcome: Outcome): boolean {
  return outcome.reply !== undefined && outcome.reply.ok === 1 && outcome.reply.writeErrors === undefined && outcome.reply.writeConcernError === undefined;
}

// A client of the routers, as the official driver behaves toward them: one command at a time per
// caller, a timeout on each, retryable writes with a session's lsid and txnNumber, retried on
// another router after a network error or a retryable one.
export class SimDriver {
  constructor(
    private readonly network: Network,
    readonly routers: readonly string[],
    readonly sleep: (ms: number) => Promise<void>,
    private readonly random: () => number,
  ) {}

  async send(router: string, db: string, cmd: Doc, timeoutMs = 15_000): Promise<Outcome> {
    try {
      return { reply: await this.network.command(router, db, cmd, { timeoutMs }) };
    } catch (err) {
      if (err instanceof MongoError) return { error: err };
      throw err;
    }
  }

  router(): string {
    return this.routers[Math.floor(this.random() * this.routers.length)]!;
  }

  newLsid(): Doc {
    const bytes = Buffer.alloc(16);
    for (let i = 0; i < 16; i++) bytes[i] = Math.floor(this.random() * 256);
    return { id: new UUID(bytes) };
  }

  // A retryable write: the same txnNumber on every attempt, at most `attempts` of them.
  async retryableWrite(db: string, cmd: Doc, session: { lsid: Doc; txnNumber: number }, attempts = 6): Promise<{ fate: WriteFate; reply?: Doc }> {
    session.txnNumber += 1;
    const body = { ...cmd, lsid: session.lsid, txnNumber: Long.fromNumber(session.txnNumber) };
    let uncertain = false;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const outcome = await this.send(this.router(), db, body);
      if (succeeded(outcome)) return { fate: 'acked', reply: outcome.reply };
      if (!retryable(outcome)) return { fate: uncertain ? 'unknown' : 'refused', ...(outcome.reply === undefined ? {} : { reply: outcome.reply }) };
      uncertain = true;
      await this.sleep(50 + Math.floor(this.random() * 200));
    }
    return { fate: 'unknown' };
  }
}
