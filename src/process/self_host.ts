import os from 'node:os';
import type { NodeOptions } from '../mongod_commands/command.js';

// Whether a replica set config's "host:port" names this process: its bound port, and a name or
// address of this machine (MongoDB's isSelf asks the same of its interfaces).
export function isSelfHost(host: string, options: Pick<NodeOptions, 'port' | 'bindIp'>): boolean {
  const colon = host.lastIndexOf(':');
  const name = colon < 0 ? host : host.slice(0, colon);
  const port = colon < 0 ? 27017 : Number(host.slice(colon + 1));
  if (port !== options.port) return false;
  const mine = new Set(['localhost', '127.0.0.1', '::1', '[::1]', os.hostname(), ...options.bindIp.split(',').map((h) => h.trim())]);
  for (const addresses of Object.values(os.networkInterfaces())) for (const a of addresses ?? []) mine.add(a.address);
  return mine.has(name);
}
