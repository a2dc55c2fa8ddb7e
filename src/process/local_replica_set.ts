import { createServer } from 'node:net';
import type { Doc } from '../bson/values.js';
import type { WireClient } from '../wire/client.js';

const PRIMARY_POLL_MS = 200;
const HELLO_TIMEOUT_MS = 5_000;

// Where member `i` of a local set listens: its own loopback address (127.0.0.1, .2, ...) when the
// machine answers on them (Linux gives all of 127/8 to the loopback device), so that each member is
// a host of its own as in a real deployment; 127.0.0.1 otherwise, the members told apart by port.
export async function memberAddresses(count: number): Promise<string[]> {
  const own = Array.from({ length: count }, (_, i) => `127.0.0.${i + 1}`);
  const usable = await Promise.all(own.map(canListenOn));
  return usable.every(Boolean) ? own : own.map(() => '127.0.0.1');
}

function canListenOn(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(0, address, () => server.close(() => resolve(true)));
  });
}

// replSetInitiate with every member, sent to the first (a set initiated before, on a restart,
// answers AlreadyInitialized and keeps its config), then waits until a member is writable primary,
// as addShard and the router's first catalog write need one.
export async function initiateLocalSet(client: WireClient, name: string, hosts: string[], timeoutMs: number): Promise<void> {
  const config = { _id: name, members: hosts.map((host, i) => ({ _id: i, host })) };
  const reply = await client.command(hosts[0]!, 'admin', { replSetInitiate: config }, { timeoutMs });
  if (Number(reply.ok) !== 1 && reply.codeName !== 'AlreadyInitialized') {
    throw new Error(`replSetInitiate of ${name} failed: ${String(reply.errmsg)} (${String(reply.codeName ?? reply.code)})`);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hellos = await Promise.all(hosts.map((h) => client.command(h, 'admin', { hello: 1 }, { timeoutMs: HELLO_TIMEOUT_MS }).catch((): Doc | undefined => undefined)));
    if (hellos.some((h) => h?.isWritablePrimary === true)) return;
    if (Date.now() > deadline) throw new Error(`replica set ${name} has no primary ${timeoutMs} ms after replSetInitiate`);
    await new Promise((resolve) => setTimeout(resolve, PRIMARY_POLL_MS));
  }
}

export function setConnectionString(name: string, hosts: readonly string[]): string {
  return `${name}/${hosts.join(',')}`;
}
