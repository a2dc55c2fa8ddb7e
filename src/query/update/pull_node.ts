import { mongoError } from '../../base/errors.js';
import { bsonTypeName, valuesEqual } from '../../bson/compare.js';
import { bsonTag, isPlainObject, type Doc } from '../../bson/values.js';
import { compileFilter } from '../match/matcher.js';
import { modifier, NOOP, type ModifierNode } from './modifier_node.js';

type ElementPredicate = (element: unknown) => boolean;

// Operators that start a whole query rather than a condition on one value: `{$or: [...]}` as a
// $pull argument is matched against each subdocument, `{$gt: 5}` against each element.
const TOP_LEVEL_OPERATORS = new Set(['$and', '$or', '$nor', '$expr', '$where', '$text', '$comment', '$jsonSchema']);
const WRAP_FIELD = 'pulled';

export function makePullNode(arg: unknown, variables?: Record<string, unknown>): ModifierNode {
  return makeCullingNode('$pull', pullPredicate(arg, variables));
}

export function makePullAllNode(arg: unknown): ModifierNode {
  if (!Array.isArray(arg)) throw mongoError('BadValue', `$pullAll requires an array argument but was given a ${bsonTypeName(arg)}`);
  return makeCullingNode('$pullAll', (element) => arg.some((v) => valuesEqual(element, v)));
}

function pullPredicate(arg: unknown, variables?: Record<string, unknown>): ElementPredicate {
  if (isPlainObject(arg)) {
    const first = Object.keys(arg)[0];
    if (first === undefined || !first.startsWith('$') || TOP_LEVEL_OPERATORS.has(first)) {
      const matcher = compileFilter(arg, { variables, javascript: false });
      return (element) => isPlainObject(element) && matcher.matches(element);
    }
  }
  if (isPlainObject(arg) || bsonTag(arg) === 'BSONRegExp') {
    const matcher = compileFilter({ [WRAP_FIELD]: arg }, { variables, javascript: false });
    return (element) => matcher.matches({ [WRAP_FIELD]: element } as Doc);
  }
  return (element) => valuesEqual(element, arg);
}

function makeCullingNode(operator: '$pull' | '$pullAll', shouldRemove: ElementPredicate): ModifierNode {
  return modifier(operator, {
    allowCreation: false,
    updateExisting: (old) => {
      if (!Array.isArray(old)) throw mongoError('BadValue', `Cannot apply ${operator} to a non-array value`);
      const kept = old.filter((e) => !shouldRemove(e));
      return kept.length === old.length ? NOOP : kept;
    },
    valueForNew: () => undefined,
  });
}
