import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { SessionKillerMatcher } from './kill_sessions.js';
import type { LogicalSessionId } from './session_id.js';

// An operation in progress under a session, as killSessions sees it. Killing it interrupts what
// it waits for through `interruptible`: only waits that have changed nothing yet (a critical
// section, a version check, an awaitData getMore), so an interrupted operation did nothing.
export class SessionOperation {
  private controller: AbortController | undefined;
  private interrupted: MongoError | undefined;

  constructor(readonly lsid: LogicalSessionId, private readonly running: Set<SessionOperation>) {}

  // `work`, or Interrupted when the session is killed first.
  interruptible<T>(work: Promise<T>): Promise<T> {
    if (this.interrupted !== undefined) {
      work.catch(() => undefined);
      return Promise.reject(this.interrupted);
    }
    const signal = (this.controller ??= new AbortController()).signal;
    return new Promise<T>((resolve, reject) => {
      const onKill = (): void => reject(this.interrupted);
      signal.addEventListener('abort', onKill, { once: true });
      work.then(
        (value) => { signal.removeEventListener('abort', onKill); resolve(value); },
        (err: unknown) => { signal.removeEventListener('abort', onKill); reject(err); },
      );
    });
  }

  kill(): void {
    this.interrupted ??= new MongoError(ErrorCodes.Interrupted, 'operation was interrupted');
    this.controller?.abort();
  }

  end(): void {
    this.running.delete(this);
  }
}

// What a process kills of a session beyond its operations: its cursors, and on a router what the
// session has on the shards. `remote` answers the hosts it could not reach.
export interface SessionKillFunctions {
  cursors(matcher: SessionKillerMatcher): number | Promise<number>;
  remote?(matcher: SessionKillerMatcher): Promise<string[]>;
}

// MongoDB's SessionKiller with the operations registry it kills from: every operation that runs
// under a session is registered for its duration; killing sessions interrupts theirs, then closes
// their cursors (killSessionsLocal), then, on a router, kills them on every shard
// (killSessionsRemote).
export class SessionKiller {
  private readonly running = new Set<SessionOperation>();

  constructor(private readonly kills: SessionKillFunctions) {}

  begin(lsid: LogicalSessionId): SessionOperation {
    const op = new SessionOperation(lsid, this.running);
    this.running.add(op);
    return op;
  }

  // The sessions of the operations in progress, which a refresh keeps alive.
  activeSessions(): LogicalSessionId[] {
    return [...this.running].map((op) => op.lsid);
  }

  async kill(matcher: SessionKillerMatcher): Promise<void> {
    for (const op of this.running) if (matcher.match(op.lsid)) op.kill();
    await this.kills.cursors(matcher);
    const failed = this.kills.remote === undefined ? [] : await this.kills.remote(matcher);
    if (failed.length > 0) throw new MongoError(ErrorCodes.HostUnreachable, 'Failed to kill sessions on some hosts');
  }
}
