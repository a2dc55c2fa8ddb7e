import type { Doc } from '../bson/values.js';
import type { BalancerPolicyName } from './balancer_policy.js';
import { chunkSizeBytesFromSetting } from '../catalog/chunk_size.js';


export interface ActiveWindow {
  readonly start: number; // minutes after local midnight
  readonly stop: number;
}

// What the balancer reads from config.settings each round (MongoDB's BalancerConfiguration):
// the documents with _id "balancer", "chunksize" and "automerge".
export interface BalancerSettings {
  readonly mode: 'full' | 'off';
  // An activeWindow that cannot be read stops balancing rather than balancing at any hour.
  readonly activeWindow: ActiveWindow | 'invalid' | undefined;
  readonly policy: BalancerPolicyName;
  readonly waitForDelete: boolean;
  readonly attemptToBalanceJumboChunks: boolean;
  readonly chunkSizeBytes: number;
  readonly autoMerge: boolean;
}

export function parseBalancerSettings(balancer: Doc | undefined, chunksize: Doc | undefined, automerge: Doc | undefined): BalancerSettings {
  // No document means the balancer is on, as in a fresh MongoDB cluster; `stopped` is what
  // sh.getBalancerState() reads, `mode` what balancerStart/balancerStop write.
  const mode = balancer?.mode === 'off' || balancer?.stopped === true ? 'off' : 'full';
  return {
    mode,
    activeWindow: balancer?.activeWindow === undefined ? undefined : parseWindow(balancer.activeWindow),
    policy: balancer?.policy === 'chunkCount' ? 'chunkCount' : 'dataSize',
    waitForDelete: balancer?._waitForDelete === true,
    attemptToBalanceJumboChunks: balancer?.attemptToBalanceJumboChunks === true,
    chunkSizeBytes: chunkSizeBytesFromSetting(chunksize?.value),
    autoMerge: automerge?.enabled !== false,
  };
}

function parseWindow(raw: unknown): ActiveWindow | 'invalid' {
  if (typeof raw !== 'object' || raw === null) return 'invalid';
  const { start, stop } = raw as Doc;
  const s = parseHHMM(start);
  const e = parseHHMM(stop);
  if (s === undefined || e === undefined || s === e) return 'invalid';
  return { start: s, stop: e };
}

function parseHHMM(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{1,2}):(\d{2})$/.exec(value);
  if (!m) return undefined;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h > 23 || min > 59) return undefined;
  return h * 60 + min;
}

// The window is inclusive at both ends and may wrap past midnight (start "23:00", stop "06:00").
export function inBalancingWindow(window: BalancerSettings['activeWindow'], now: Date): boolean {
  if (window === undefined) return true;
  if (window === 'invalid') return false;
  const minutes = now.getHours() * 60 + now.getMinutes();
  if (window.start < window.stop) return minutes >= window.start && minutes <= window.stop;
  return minutes >= window.start || minutes <= window.stop;
}

// The balancer moves chunks only when it is on and inside its window.
export function shouldBalance(settings: BalancerSettings, now: Date): boolean {
  return settings.mode === 'full' && inBalancingWindow(settings.activeWindow, now);
}
