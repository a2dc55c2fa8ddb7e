import type { CommandDefinition } from '../command.js';
import { autoSplitVectorCommand } from './auto_split_vector.js';
import { dataSizeCommand } from './data_size.js';
import { getStatsForBalancingCommand } from './stats_for_balancing.js';

// What the balancer asks of a shard: sizes of collections and ranges, and where to cut a range.
export const balancingShardCommands: readonly CommandDefinition[] = [autoSplitVectorCommand, dataSizeCommand, getStatsForBalancingCommand];
