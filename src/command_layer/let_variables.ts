import type { Doc } from '../bson/values.js';
import { compileExpression } from '../query/agg/expression.js';
import { optionalDoc } from './args.js';

// A command's `let` holds expressions ({$literal: ...}, {$add: [1, 2]}) that are evaluated once,
// against no document, before any stage or filter sees the variables.
export function letVariables(cmd: Doc): Record<string, unknown> | undefined {
  const raw = optionalDoc(cmd, 'let');
  if (!raw) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, expr] of Object.entries(raw)) out[name] = compileExpression(expr, { variables: out })({});
  return out;
}
