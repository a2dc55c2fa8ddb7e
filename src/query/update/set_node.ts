import { cloneValue } from '../../bson/values.js';
import { identical } from './identical.js';
import { modifier, NOOP, REMOVE, type ModifierNode } from './modifier_node.js';

export function makeSetNode(value: unknown): ModifierNode {
  return modifier('$set', {
    updateExisting: (old) => (identical(old, value) ? NOOP : cloneValue(value)),
    valueForNew: () => cloneValue(value),
  });
}

// Participates in conflict detection on every update, but only writes when the update inserts.
export function makeSetOnInsertNode(value: unknown): ModifierNode {
  return modifier('$setOnInsert', {
    insertOnly: true,
    updateExisting: (old) => (identical(old, value) ? NOOP : cloneValue(value)),
    valueForNew: () => cloneValue(value),
  });
}

export function makeUnsetNode(): ModifierNode {
  return modifier('$unset', {
    allowCreation: false,
    allowNonViablePath: true,
    updateExisting: () => REMOVE,
    valueForNew: () => undefined,
  });
}
