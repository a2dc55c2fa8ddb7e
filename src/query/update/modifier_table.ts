import { makeAddToSetNode } from './addtoset_node.js';
import { makeArithmeticNode } from './arithmetic_node.js';
import { makeBitNode } from './bit_node.js';
import { makeCompareNode } from './compare_node.js';
import { makeCurrentDateNode } from './current_date_node.js';
import type { ModifierNode } from './modifier_node.js';
import { makePopNode } from './pop_node.js';
import { makePullAllNode, makePullNode } from './pull_node.js';
import { makePushNode } from './push_node.js';
import { makeSetNode, makeSetOnInsertNode, makeUnsetNode } from './set_node.js';

type ModifierFactory = (field: string, arg: unknown, variables?: Record<string, unknown>) => ModifierNode;

// Every update operator but $rename, which is two nodes rather than one and is built apart.
export const MODIFIERS: ReadonlyMap<string, ModifierFactory> = new Map<string, ModifierFactory>([
  ['$set', (_f, arg) => makeSetNode(arg)],
  ['$setOnInsert', (_f, arg) => makeSetOnInsertNode(arg)],
  ['$unset', () => makeUnsetNode()],
  ['$inc', (f, arg) => makeArithmeticNode('$inc', f, arg)],
  ['$mul', (f, arg) => makeArithmeticNode('$mul', f, arg)],
  ['$min', (_f, arg) => makeCompareNode('$min', arg)],
  ['$max', (_f, arg) => makeCompareNode('$max', arg)],
  ['$currentDate', (_f, arg) => makeCurrentDateNode(arg)],
  ['$push', (_f, arg) => makePushNode(arg)],
  ['$addToSet', (_f, arg) => makeAddToSetNode(arg)],
  ['$pop', (f, arg) => makePopNode(f, arg)],
  ['$pull', (_f, arg, variables) => makePullNode(arg, variables)],
  ['$pullAll', (_f, arg) => makePullAllNode(arg)],
  ['$bit', (_f, arg) => makeBitNode(arg)],
]);
