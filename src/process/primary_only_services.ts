import type { Logger } from 'pino';

// The term a service was started in, as MongoDB's PrimaryOnlyService instances hold it: work
// started in one term asks `isCurrent()` before it writes, so a deposed primary's late effects
// (after a step-down, or after a step-down and a step-up in a later term) are refused.
export interface PrimaryTerm {
  readonly term: number;
  isCurrent(): boolean;
}

// A service that runs on a writable primary only (MongoDB's PrimaryOnlyService): started from its
// persisted state documents at step-up, stopped at step-down with its in-flight work interrupted.
// A stop resolves once nothing of it runs any more, and it can be started again afterwards.
export interface PrimaryOnlyService {
  readonly name: string;
  onStepUp(term: PrimaryTerm): void;
  onStepDown(atShutdown: boolean): void | Promise<void>;
}

// What a member state change means for the services: start them in this term, stop them, or
// both (a step-up seen in a term other than the one they run in).
export type PrimaryOnlyTransition = 'stepUp' | 'stepDown' | 'restart' | 'none';

export function primaryOnlyTransition(runningTerm: number | undefined, writablePrimary: boolean, term: number): PrimaryOnlyTransition {
  if (!writablePrimary) return runningTerm === undefined ? 'none' : 'stepDown';
  if (runningTerm === undefined) return 'stepUp';
  return runningTerm === term ? 'none' : 'restart';
}

// MongoDB's PrimaryOnlyServiceRegistry: the node's primary-only services, started together when
// the member becomes a writable primary and stopped together when it stops being one. Transitions
// run one after another: a step-up waits until every service of the previous term has stopped, so
// two terms' work never runs side by side; with nothing stopping, it starts them at once, before
// the member answers its next command. A node outside a replica set is its own primary
// (`startStandalone`), in term 0, until shutdown.
export class PrimaryOnlyServiceRegistry {
  private readonly services: PrimaryOnlyService[] = [];
  private running: number | undefined;
  private current: PrimaryTerm | undefined;
  // Raised at every transition: a PrimaryTerm is current while it holds the generation it was made in.
  private generation = 0;
  private shutDown = false;
  private stopping = 0;
  private transitions: Promise<void> = Promise.resolve();

  constructor(private readonly logger: Logger) {}

  // A service registered while the services run starts in their term at once.
  register(service: PrimaryOnlyService): void {
    this.services.push(service);
    if (this.current?.isCurrent() === true && this.stopping === 0) this.startOne(service, this.current);
  }

  get runningTerm(): number | undefined {
    return this.running;
  }

  startStandalone(): void {
    this.memberStateChanged(true, 0);
  }

  // The replication coordinator's state listener.
  memberStateChanged(writablePrimary: boolean, term: number): void {
    if (this.shutDown) return;
    const transition = primaryOnlyTransition(this.running, writablePrimary, term);
    if (transition === 'none') return;
    this.generation += 1;
    if (transition === 'stepDown' || transition === 'restart') this.stopAll(false);
    if (transition === 'stepUp' || transition === 'restart') {
      this.running = term;
      const token = this.token(term);
      if (this.stopping === 0) this.startAll(token);
      else this.transitions = this.transitions.then(() => this.startAll(token));
    }
  }

  // Shutdown: every service stops, and none starts again.
  async shutdown(): Promise<void> {
    this.shutDown = true;
    this.generation += 1;
    if (this.running !== undefined) this.stopAll(true);
    await this.transitions;
  }

  private token(term: number): PrimaryTerm {
    const generation = this.generation;
    return { term, isCurrent: () => this.generation === generation };
  }

  private startAll(token: PrimaryTerm): void {
    // A step-down that came while the previous term's services were stopping makes this one stale.
    if (!token.isCurrent()) return;
    this.current = token;
    for (const service of this.services) this.startOne(service, token);
    this.logger.info({ c: 'REPL', term: token.term, services: this.services.map((s) => s.name) }, 'Started primary-only services');
  }

  private startOne(service: PrimaryOnlyService, token: PrimaryTerm): void {
    try {
      service.onStepUp(token);
    } catch (err) {
      this.logger.error({ c: 'REPL', service: service.name, term: token.term, err }, 'Primary-only service failed to start');
    }
  }

  // Each service is told at once (its work is interrupted now); the next start waits for them all.
  private stopAll(atShutdown: boolean): void {
    this.running = undefined;
    this.current = undefined;
    this.stopping += 1;
    const stopped = Promise.all(this.services.map(async (service) => {
      try {
        await service.onStepDown(atShutdown);
      } catch (err) {
        this.logger.error({ c: 'REPL', service: service.name, err }, 'Primary-only service failed to stop');
      }
    })).then(() => {
      this.stopping -= 1;
      this.logger.info({ c: 'REPL', services: this.services.map((s) => s.name) }, 'Stopped primary-only services');
    });
    this.transitions = this.transitions.then(() => stopped);
  }
}
