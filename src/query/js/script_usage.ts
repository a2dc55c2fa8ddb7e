import { isPlainObject } from '../../bson/values.js';

// Whether a pipeline, stage or expression holds JavaScript to run ($function, $accumulator): what
// a router with --noscripting refuses, and what it runs on a shard rather than itself.
export function usesScripts(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(usesScripts);
  if (!isPlainObject(value)) return false;
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$function' || key === '$accumulator') return true;
    if (key !== '$literal' && usesScripts(inner)) return true;
  }
  return false;
}
