import type { RouterServices } from './router_services.js';
import { readReceivedCommand, routedNamespace, shardRequest, valueBytes, type CommandShape, type ReceivedCommand } from './received_command.js';
import { versionTail, type Routing } from './versioned_request.js';

// The first and last steps the fast paths share: a driver's command read by its shape, naming a
// collection whose routing is cached, and its passing on to the one shard it targets.

export interface RoutedCommand {
  command: ReceivedCommand;
  db: string;
  ns: string;
  routing: Routing;
}

export function readRoutedCommand(router: RouterServices, message: Buffer, shape: CommandShape): RoutedCommand | undefined {
  const command = readReceivedCommand(message, shape);
  if (command === undefined) return undefined;
  const names = routedNamespace(message, command, shape);
  if (names === undefined) return undefined;
  const routing = router.catalogCache.peekRouting(names.ns);
  return routing === undefined ? undefined : { command, db: names.db, ns: names.ns, routing };
}

// The command sent to `shard` with its version, when the shard's host is cached (undefined
// otherwise); its session touched first, as the dispatcher touches every command's.
export function passOn(router: RouterServices, message: Buffer, routed: RoutedCommand, shape: CommandShape, shard: string): Promise<Buffer> | undefined {
  const host = router.shardRegistry.cachedHost(shard);
  if (host === undefined) return undefined;
  const lsid = valueBytes(message, routed.command, shape.lsidSlot);
  if (lsid !== undefined) router.sessions.touchBytes(lsid, Date.now());
  return router.client.forwardMessage(host, shardRequest(message, routed.command, versionTail(routed.routing, shard, routed.db)));
}
