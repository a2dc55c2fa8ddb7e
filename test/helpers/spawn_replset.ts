import { MongoClient } from 'mongodb';
import { spawnNode, type AnyDoc, type SpawnedNode, type SpawnNodeOptions } from './spawn_node.js';

// A replica set of real `docshard shard --replSet NAME` processes on ephemeral ports, initiated
// through the official driver and waited for until it has a primary and every other member is a
// SECONDARY, as MongoDB's ReplSetTest.initiate() leaves a set.
export interface SpawnedReplicaSet {
  readonly name: string;
  readonly nodes: SpawnedNode[];
  readonly hosts: string[];
  // The driver's seed list with ?replicaSet=NAME.
  readonly uri: string;
  stop(): Promise<void>;
}

export interface SpawnReplicaSetOptions {
  members?: number;
  name?: string;
  // settings.electionTimeoutMillis (MongoDB's default 10 s when absent).
  electionTimeoutMillis?: number;
  node?: (i: number) => SpawnNodeOptions;
  // Each member's own loopback address (--bind_ip; it connects from it too), 127.0.0.1 otherwise.
  address?: (i: number) => string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `fn` every `pollMs` until it gives a value (an error counts as none yet, named if time runs out).
export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000, pollMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError === undefined ? '' : `: ${(lastError as Error).message}`}`);
    await sleep(pollMs);
  }
}

export async function spawnReplicaSet(options: SpawnReplicaSetOptions = {}): Promise<SpawnedReplicaSet> {
  const name = options.name ?? 'rs0';
  const count = options.members ?? 3;
  const nodes: SpawnedNode[] = [];
  const stop = async (): Promise<void> => {
    await Promise.allSettled(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < count; i++) {
      const own = options.node?.(i) ?? {};
      const bind = options.address === undefined ? [] : ['--bind_ip', options.address(i)];
      nodes.push(await spawnNode({ ...own, extraArgs: ['--replSet', name, ...bind, ...(own.extraArgs ?? [])] }));
    }
    const hosts = nodes.map((n, i) => `${options.address?.(i) ?? '127.0.0.1'}:${n.port}`);
    const first = new MongoClient(`mongodb://${hosts[0]}/?directConnection=true`);
    try {
      const settings = options.electionTimeoutMillis === undefined ? {} : { settings: { electionTimeoutMillis: options.electionTimeoutMillis } };
      await first.db('admin').command({ replSetInitiate: { _id: name, members: hosts.map((host, i) => ({ _id: i, host })), ...settings } });
      // As MongoDB's ReplSetTest: the first member is stepped up once it may stand, rather than
      // left to wait out its election timeout (10 s by default). It answers once the election is
      // over; one refused (it cannot see a majority yet) is asked again.
      await until('the first member stepped up', async () => {
        await first.db('admin').command({ replSetStepUp: 1 });
        return true;
      });
      await until('a primary and every other member SECONDARY', async () => {
        const status = await first.db('admin').command({ replSetGetStatus: 1 });
        const states = (status.members as AnyDoc[]).map((m) => m.stateStr as string);
        return states.filter((s) => s === 'PRIMARY').length === 1 && states.filter((s) => s === 'SECONDARY').length === count - 1 ? true : undefined;
      });
    } finally {
      await first.close();
    }
    return { name, nodes, hosts, uri: `mongodb://${hosts.join(',')}/?replicaSet=${name}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
