import type { CommandDefinition } from '../command.js';
import { configureFailPoint, waitForFailPoint } from '../../command_layer/fail_point_commands.js';

// The fail point commands of a node (a router's are in router/commands/cluster_fail_points.ts,
// over the same two functions).
export const configureFailPointCommand: CommandDefinition = {
  names: ['configureFailPoint'],
  adminOnly: true,
  testOnly: true,
  run: (ctx, cmd) => configureFailPoint(ctx.node.failPoints, cmd),
};

export const waitForFailPointCommand: CommandDefinition = {
  names: ['waitForFailPoint'],
  adminOnly: true,
  testOnly: true,
  run: (ctx, cmd) => waitForFailPoint(ctx.node.failPoints, cmd, ctx.node.wallClock),
};
