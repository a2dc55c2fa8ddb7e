import type { GenericArguments } from './command_entry.js';
import { readReceivedCommand, routedNamespace, type CommandShape, type ReceivedCommand } from './received_command.js';
import type { Routing } from './versioned_request.js';

// What the fast paths' planners share: the router's caches as they may read them, a driver's
// command read by its shape and naming a collection whose routing is cached, and the plan they
// make of it.

// The caches a planner reads, without waiting on anything (the catalog cache's peekRouting).
export interface CachedRouting {
  routing(ns: string): Routing | undefined;
  // Namespaces a shard answered as views: their reads are the general path's.
  isView(ns: string): boolean;
}

export interface RoutedCommand {
  command: ReceivedCommand;
  db: string;
  ns: string;
  routing: Routing;
}

export function readRoutedCommand(caches: CachedRouting, message: Buffer, shape: CommandShape): RoutedCommand | undefined {
  const command = readReceivedCommand(message, shape);
  if (command === undefined) return undefined;
  const names = routedNamespace(message, command, shape);
  if (names === undefined) return undefined;
  const routing = caches.routing(names.ns);
  return routing === undefined ? undefined : { command, db: names.db, ns: names.ns, routing };
}

// A planner's answer when it takes the command: forward `request` to `shard`. Its generic
// arguments are for the entry every command passes (command_entry.ts) before anything is sent.
export interface Forward {
  requestId: number;
  ns: string;
  routing: Routing;
  shard: string;
  // The shard's OP_MSG request, its header left for WireClient.forwardMessage, and where the time
  // of its $clusterTime goes (the router's, once the command has entered).
  request: Buffer;
  clusterTimeAt: number;
  generic: GenericArguments;
}
