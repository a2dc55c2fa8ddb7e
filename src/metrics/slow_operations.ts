import type { RequestObserver } from './message_metrics.js';

// MongoDB's slow operation log: a request that takes longer than `slowms` milliseconds is logged
// ("Slow query"), one in `sampleRate` of them; at logLevel 1 and above, every request is. The
// profile command reads and sets both; like MongoDB's they are the process's own, held in memory
// (100 and 1 at every start).
export class SlowOperationSettings {
  slowms = 100;
  sampleRate = 1;
}

const byOwner = new WeakMap<object, SlowOperationSettings>();

// One per process object, as commandMetricsOf: the message wrapper and the profile command find
// the same settings.
export function slowOperationSettingsOf(owner: object): SlowOperationSettings {
  let settings = byOwner.get(owner);
  if (settings === undefined) byOwner.set(owner, settings = new SlowOperationSettings());
  return settings;
}

// What is reported of a request: its bytes (decoded only now, so that the others pay for a
// comparison alone), how long it took, whether its reply said ok, and whether it was slow (or
// reported because `everything` says so: MongoDB logs every operation at logLevel 1 and above).
export type SlowOperationReport = (message: Buffer, durationMillis: number, ok: boolean, slow: boolean) => void;

// An observer of the requests withCommandMetrics times (message_metrics.ts), so that the log takes
// their duration and outcome from there rather than timing and reading each reply again.
export function slowOperationObserver(settings: SlowOperationSettings, report: SlowOperationReport, everything: () => boolean): RequestObserver {
  return (message, elapsedMs, ok) => {
    const slow = elapsedMs > settings.slowms && (settings.sampleRate >= 1 || Math.random() < settings.sampleRate);
    if (slow || everything()) report(message, Math.round(elapsedMs), ok, slow);
  };
}
