import { MongoError } from '../../base/errors.js';

// What a process lets scripts do, set once as it starts: whether scripts are allowed at all
// (--noscripting turns them off, on a node or a router), whether this process runs them itself (a
// router never does: it has them run on shards), and MongoDB's limits on each evaluation,
// internalQueryJavaScriptFnTimeoutMillis (60 s) and internalQueryJavaScriptHeapSizeLimitMB (100).
export interface ScriptSettings {
  enabled: boolean;
  local: boolean;
  timeoutMillis: number;
  heapLimitMB: number;
}

const SCRIPT_PARAMETER_NAMES = ['internalQueryJavaScriptFnTimeoutMillis', 'internalQueryJavaScriptHeapSizeLimitMB'] as const;

// V8 will not run an isolate in less than this (isolated-vm's floor).
const MIN_HEAP_MB = 8;

let settings: ScriptSettings = { enabled: true, local: true, timeoutMillis: 60_000, heapLimitMB: 100 };

export function configureScripting(next: Partial<ScriptSettings>): void {
  settings = { ...settings, ...next };
  settings.heapLimitMB = Math.max(MIN_HEAP_MB, settings.heapLimitMB);
}

export function scriptSettings(): ScriptSettings {
  return settings;
}

// mongod's answer to $function, $accumulator and mapReduce when it has no script engine.
export function checkScriptingEnabled(): void {
  if (!settings.enabled) throw new MongoError(31264, 'Cannot run server-side javascript without the javascript engine enabled');
}

// Takes the script limits out of a process's `--setParameter name=value` list (the rest goes to
// the process's own parameters), refusing a value that is not a positive integer as mongod does.
export function takeScriptParameters(values: readonly string[]): { rest: string[]; limits: Partial<ScriptSettings> } {
  const rest: string[] = [];
  const limits: Partial<ScriptSettings> = {};
  for (const raw of values) {
    const eq = raw.indexOf('=');
    const name = eq < 0 ? raw : raw.slice(0, eq);
    if (!(SCRIPT_PARAMETER_NAMES as readonly string[]).includes(name)) {
      rest.push(raw);
      continue;
    }
    const value = eq < 0 ? '' : raw.slice(eq + 1);
    const n = Number(value);
    if (value === '' || !Number.isInteger(n) || n < 1) throw new Error(`Bad value for --setParameter ${name}: '${value}'`);
    if (name === 'internalQueryJavaScriptFnTimeoutMillis') limits.timeoutMillis = n;
    else limits.heapLimitMB = n;
  }
  return { rest, limits };
}
