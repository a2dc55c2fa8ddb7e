import { isNumber, toDouble, type Doc } from '../bson/values.js';
import type { RouterServices } from '../router/router_services.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';

// One look at the cluster, as a MongoDB tool would take it: config.* read from the config server,
// serverStatus, currentOp and collection statistics from every node. Each part that fails is left
// out with its error, so a node that is down shows as down rather than stopping the look.

// How far back the migration history goes: the last hours of config.changelog.
const HISTORY_MS = 3 * 60 * 60 * 1000;
const HISTORY_ENTRIES = 30;
const ROUND_ENTRIES = 12;
const TIMEOUT_MS = 3000;

export interface NodeSample {
  name: string;
  host: string;
  // serverStatus, with opLatencies histograms; undefined when the node did not answer.
  status?: Doc;
  error?: string;
  pingMs?: number;
  ops: Doc[];
  // replSetGetStatus of a replica set's primary (a set's host string reaches it); undefined for a
  // node that is no member, or when it did not answer.
  replSet?: Doc;
}

export interface CollectionSample {
  doc: Doc;
  chunks: Doc[];
  // Per shard name: collStats's storageStats.
  stats: Map<string, Doc>;
}

export interface ClusterSample {
  timeMs: number;
  config: NodeSample;
  shards: Array<NodeSample & { doc: Doc }>;
  routers: Doc[];
  balancerStatus?: Doc;
  balancerSettings?: Doc;
  rounds: Doc[];
  collections: CollectionSample[];
  tags: Doc[];
  history: Doc[];
  // Per donation in flight (by migration id): the bytes of its range, asked once (dataSize).
  rangeBytes: Map<string, number>;
}

export class ClusterPoller {
  private readonly rangeBytes = new Map<string, number>();

  constructor(private readonly router: RouterServices) {}

  async sample(): Promise<ClusterSample> {
    const { client, options } = this.router;
    const configHost = options.configHost;
    const config = (cmd: Doc): Promise<Doc[]> => fetchAll(client, configHost, 'config', cmd);
    const since = new Date(this.router.wallClock.now() - HISTORY_MS);
    const [shardDocs, routers, collections, tags, history, rounds, settings] = await Promise.all([
      config({ find: 'shards', sort: { _id: 1 } }),
      config({ find: 'mongos', sort: { _id: 1 } }).catch(() => []),
      config({ find: 'collections', filter: { unsplittable: { $ne: true }, _id: { $not: /^config\./ } }, sort: { _id: 1 } }),
      config({ find: 'tags', sort: { ns: 1, min: 1 } }),
      config({ find: 'changelog', filter: { what: { $in: ['moveChunk.commit', 'moveChunk.error'] }, time: { $gte: since } }, sort: { time: -1 }, limit: HISTORY_ENTRIES }),
      config({ find: 'actionlog', filter: { what: 'balancer.round' }, sort: { time: -1 }, limit: ROUND_ENTRIES }),
      config({ find: 'settings', filter: { _id: 'balancer' } }),
    ]);
    const [configNode, shards, balancerStatus] = await Promise.all([
      this.node('config', configHost),
      Promise.all(shardDocs.map(async (doc) => ({ doc, ...await this.node(String(doc._id), String(doc.host)) }))),
      client.command(configHost, 'admin', { balancerStatus: 1 }, { timeoutMs: TIMEOUT_MS }).then(checkOk, () => undefined),
    ]);
    const collectionSamples = await Promise.all(collections.map(async (doc) => {
      const ns = String(doc._id);
      const [chunks, stats] = await Promise.all([
        config({ find: 'chunks', filter: { uuid: doc.uuid }, sort: { min: 1 }, projection: { min: 1, max: 1, shard: 1 } }),
        Promise.all(shards.filter((s) => s.status !== undefined).map(async (s) => [s.name, await this.storageStats(s.host, ns)] as const)),
      ]);
      return { doc, chunks, stats: new Map(stats.filter((e): e is readonly [string, Doc] => e[1] !== undefined)) };
    }));
    await this.measureDonations(shards);
    return {
      timeMs: this.router.wallClock.now(), config: configNode, shards, routers, balancerStatus, balancerSettings: settings[0], rounds,
      collections: collectionSamples, tags, history, rangeBytes: this.rangeBytes,
    };
  }

  private async node(name: string, host: string): Promise<NodeSample> {
    const started = performance.now();
    try {
      const status = checkOk(await this.router.client.command(host, 'admin', { serverStatus: 1, opLatencies: { histograms: true } }, { timeoutMs: TIMEOUT_MS }));
      const pingMs = performance.now() - started;
      const [ops, replSet] = await Promise.all([
        this.router.client.command(host, 'admin', { currentOp: 1 }, { timeoutMs: TIMEOUT_MS }).then((r) => (checkOk(r).inprog as Doc[]), () => []),
        status.repl === undefined ? undefined : this.router.client.command(host, 'admin', { replSetGetStatus: 1 }, { timeoutMs: TIMEOUT_MS }).then(checkOk, () => undefined),
      ]);
      return { name, host, status, pingMs, ops, ...(replSet === undefined ? {} : { replSet }) };
    } catch (err) {
      return { name, host, error: (err as Error).message, ops: [] };
    }
  }

  private async storageStats(host: string, ns: string): Promise<Doc | undefined> {
    const db = ns.slice(0, ns.indexOf('.'));
    try {
      const reply = checkOk(await this.router.client.command(host, db, { aggregate: ns.slice(db.length + 1), pipeline: [{ $collStats: { storageStats: {} } }], cursor: {} }, { timeoutMs: TIMEOUT_MS }));
      return (((reply.cursor as Doc).firstBatch as Doc[])[0]?.storageStats as Doc | undefined);
    } catch {
      return undefined;
    }
  }

  // The size of each donation's range, for its progress bar: asked of the donor once per migration.
  private async measureDonations(shards: readonly NodeSample[]): Promise<void> {
    const current = new Set<string>();
    for (const shard of shards) {
      const m = donation(shard.status);
      if (m === undefined) continue;
      const id = String(m.migrationId);
      current.add(id);
      if (this.rangeBytes.has(id)) continue;
      const ns = String(m.ns);
      const coll = await fetchAll(this.router.client, this.router.options.configHost, 'config', { find: 'collections', filter: { _id: ns } });
      const reply = await this.router.client.command(shard.host, ns.slice(0, ns.indexOf('.')), { dataSize: ns, keyPattern: coll[0]?.key ?? {}, min: m.min, max: m.max }, { timeoutMs: TIMEOUT_MS }).catch(() => undefined);
      this.rangeBytes.set(id, reply !== undefined && isNumber(reply.size) ? toDouble(reply.size) : 0);
    }
    for (const id of this.rangeBytes.keys()) if (!current.has(id)) this.rangeBytes.delete(id);
  }
}

// The donation a shard's serverStatus shows in flight, if any.
export function donation(status: Doc | undefined): Doc | undefined {
  const m = ((status?.shardingStatistics as Doc | undefined)?.docshard as Doc | undefined)?.migration as Doc | null | undefined;
  return m?.role === 'donor' ? m : undefined;
}
