import { isPlainObject } from '../../bson/values.js';
import type { CommandDefinition } from '../command.js';
import { optionalDoc, requireString } from '../../command_layer/args.js';
import { scanShardKeyRange, wholeRange } from './shard_key_range_scan.js';

// dataSize {dataSize: ns, keyPattern, min, max}: bytes and documents in a shard-key range (the
// balancer's measure of one chunk); without a key pattern, the collection's totals.
export const dataSizeCommand: CommandDefinition = {
  names: ['dataSize', 'datasize'],
  wholeNamespace: true,
  run(ctx, cmd) {
    const ns = requireString(cmd, Object.keys(cmd)[0]!);
    const started = ctx.node.wallClock.now();
    const coll = ctx.node.storage.getCollection(ns);
    if (!coll) return { size: 0, numObjects: 0, millis: 0, ok: 1 };
    const keyPattern = optionalDoc(cmd, 'keyPattern');
    if (!keyPattern || Object.keys(keyPattern).length === 0) {
      const stats = ctx.node.storage.stats.get(coll.entry.id);
      return { estimate: false, size: stats.size, numObjects: stats.count, millis: ctx.node.wallClock.now() - started, ok: 1 };
    }
    const whole = wholeRange(keyPattern);
    const min = isPlainObject(cmd.min) && Object.keys(cmd.min).length > 0 ? cmd.min : whole.min;
    const max = isPlainObject(cmd.max) && Object.keys(cmd.max).length > 0 ? cmd.max : whole.max;
    let size = 0;
    let numObjects = 0;
    for (const r of scanShardKeyRange(ctx.node.storage, coll, keyPattern, min, max)) {
      size += r.bytes;
      numObjects += 1;
    }
    return { estimate: false, size, numObjects, millis: ctx.node.wallClock.now() - started, ok: 1 };
  },
};
