import { configureFailPoint, waitForFailPoint } from '../../command_layer/fail_point_commands.js';
import type { RouterCommand } from '../router_services.js';

// The fail point commands of a router started with --enableTestCommands (mongos has them too):
// the router's own fail points, failCommand above all, which the driver specifications' tests set
// on the mongos they talk to. Without the flag they are not in the command table at all.
export const routerTestCommands: readonly RouterCommand[] = [
  { names: ['configureFailPoint'], adminOnly: true, run: (ctx, cmd) => configureFailPoint(ctx.router.failPoints, cmd) },
  { names: ['waitForFailPoint'], adminOnly: true, run: (ctx, cmd) => waitForFailPoint(ctx.router.failPoints, cmd, ctx.router.wallClock) },
];
