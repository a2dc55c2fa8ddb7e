import { mongoError } from '../../base/errors.js';
import type { Doc } from '../../bson/values.js';

// What a modifier returns for an existing element besides its new value.
export const NOOP: unique symbol = Symbol('noop');
export const REMOVE: unique symbol = Symbol('remove');

export interface ModifierContext {
  readonly path: string; // the dotted path actually taken, array indexes resolved
  readonly field: string; // the last part of `path`
  readonly doc: Doc; // the whole document being updated, for messages that quote its _id
  readonly isInsert: boolean;
  readonly now: Date | undefined;
}

// A leaf of the update tree: one operator applied to one path (MongoDB's ModifierNode).
export interface ModifierNode {
  readonly kind: 'modifier';
  readonly operator: string;
  // Whether a missing path is created (with valueForNew) or left alone.
  readonly allowCreation: boolean;
  // Only $unset tolerates a missing path that could never be created ({a: 1} and 'a.b').
  readonly allowNonViablePath: boolean;
  readonly insertOnly: boolean;
  updateExisting(value: unknown, mc: ModifierContext): unknown;
  valueForNew(mc: ModifierContext): unknown;
}

export function modifier(
  operator: string,
  behaviour: Pick<ModifierNode, 'updateExisting' | 'valueForNew'> & Partial<Pick<ModifierNode, 'allowCreation' | 'allowNonViablePath' | 'insertOnly'>>,
): ModifierNode {
  return {
    kind: 'modifier',
    operator,
    allowCreation: behaviour.allowCreation ?? true,
    allowNonViablePath: behaviour.allowNonViablePath ?? false,
    insertOnly: behaviour.insertOnly ?? false,
    updateExisting: behaviour.updateExisting,
    valueForNew: behaviour.valueForNew,
  };
}

// The query layer reads no clock: an update that needs the time is given it by its command.
export function operationTime(now: Date | undefined): Date {
  if (now === undefined) throw mongoError('InternalError', 'an update that reads the current time was given none');
  return now;
}
