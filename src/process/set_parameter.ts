import type { NodeOptions } from '../commands/command.js';

// `--setParameter name=value` for the start-up parameters a node knows (mongod's names); an
// unknown name or a bad value is refused, as mongod refuses it.
export const DEFAULT_PARAMETERS: NodeOptions['parameters'] = { orphanCleanupDelaySecs: 900 };

export function parseSetParameters(values: readonly string[]): NodeOptions['parameters'] {
  const out = { ...DEFAULT_PARAMETERS };
  for (const raw of values) {
    const eq = raw.indexOf('=');
    const name = eq < 0 ? raw : raw.slice(0, eq);
    const value = eq < 0 ? '' : raw.slice(eq + 1);
    if (name !== 'orphanCleanupDelaySecs') throw new Error(`Unknown --setParameter '${name}'`);
    const secs = Number(value);
    if (value === '' || !Number.isInteger(secs) || secs < 0) throw new Error(`Bad value for --setParameter ${name}: '${value}'`);
    out.orphanCleanupDelaySecs = secs;
  }
  return out;
}
