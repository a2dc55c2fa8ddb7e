import { compareValues } from '../../bson/compare.js';
import { cloneValue } from '../../bson/values.js';
import { modifier, NOOP, type ModifierNode } from './modifier_node.js';

export function makeCompareNode(op: '$min' | '$max', arg: unknown): ModifierNode {
  const wins = op === '$min' ? (c: number) => c < 0 : (c: number) => c > 0;
  return modifier(op, {
    updateExisting: (old) => (wins(compareValues(arg, old)) ? cloneValue(arg) : NOOP),
    valueForNew: () => cloneValue(arg),
  });
}
