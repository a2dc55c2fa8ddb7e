import { mongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, Timestamp } from '../../bson/values.js';
import { modifier, operationTime, type ModifierNode } from './modifier_node.js';

export function makeCurrentDateNode(arg: unknown): ModifierNode {
  const asDate = parseCurrentDateType(arg);
  const valueAt = (given: Date | undefined) => {
    const now = operationTime(given);
    return asDate ? new Date(now.getTime()) : new Timestamp({ t: Math.floor(now.getTime() / 1000), i: 1 });
  };
  return modifier('$currentDate', {
    updateExisting: (_old, mc) => valueAt(mc.now),
    valueForNew: (mc) => valueAt(mc.now),
  });
}

function parseCurrentDateType(arg: unknown): boolean {
  if (typeof arg === 'boolean') return true;
  if (!isPlainObject(arg)) {
    throw mongoError('BadValue', `${bsonTypeName(arg)} is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).`);
  }
  let asDate: boolean | undefined;
  for (const [key, value] of Object.entries(arg)) {
    if (key !== '$type') throw mongoError('BadValue', `Unrecognized $currentDate option: ${key}`);
    if (value === 'date') asDate = true;
    else if (value === 'timestamp') asDate = false;
  }
  if (asDate === undefined) {
    throw mongoError('BadValue', "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}");
  }
  return asDate;
}
