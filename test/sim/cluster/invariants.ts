import { MaxKey, MinKey } from 'bson';
import { compareValues } from '../../../src/bson/compare.js';
import type { Doc } from '../../../src/bson/values.js';
import type { LocalCollections } from '../../../src/query/exec/local_collection.js';
import type { ShardServices } from '../../../src/mongod_commands/command.js';
import { ACCOUNTS, ITEMS_NS, KEY_SPACE, OPENING_BALANCE, type Model } from './workloads.js';

// The routing table on the config server's disk: for every collection, its chunks join up into
// the whole key space, each range with one owner, at every placement version it passes through.
export function checkChunksTile(local: LocalCollections): string[] {
  const violations: string[] = [];
  for (const coll of local.find('config.collections')) {
    const chunks = local.find('config.chunks', { uuid: coll.uuid }).sort((a, b) => compareValues(a.min, b.min));
    if (chunks.length === 0) continue;
    const fields = Object.keys(coll.key as Doc);
    const edge = (doc: unknown, Edge: typeof MinKey | typeof MaxKey): boolean => fields.every((f) => (doc as Doc)[f] instanceof Edge);
    if (!edge(chunks[0]!.min, MinKey)) violations.push(`${String(coll._id)}: the first chunk starts at ${JSON.stringify(chunks[0]!.min)}`);
    if (!edge(chunks.at(-1)!.max, MaxKey)) violations.push(`${String(coll._id)}: the last chunk ends at ${JSON.stringify(chunks.at(-1)!.max)}`);
    for (let i = 1; i < chunks.length; i++) {
      if (compareValues(chunks[i - 1]!.max, chunks[i]!.min) !== 0) {
        violations.push(`${String(coll._id)}: chunk ending at ${JSON.stringify(chunks[i - 1]!.max)} (${String(chunks[i - 1]!.shard)}) is followed by one starting at ${JSON.stringify(chunks[i]!.min)} (${String(chunks[i]!.shard)})`);
      }
    }
  }
  return violations;
}

const PROBES: ReadonlyArray<readonly [string, Doc]> = [
  ...Array.from({ length: KEY_SPACE / 25 }, (_, i): [string, Doc] => [ITEMS_NS, { k: i * 25 }]),
  ...Array.from({ length: ACCOUNTS }, (_, i): [string, Doc] => ['bank.accounts', { _id: i }]),
];

// No key is owned by two shards that both take writes for it: a shard whose filtering metadata
// still names it the owner of a range that moved holds the critical section until it refreshes.
export function checkOneOwner(shards: ReadonlyArray<readonly [string, ShardServices]>): string[] {
  const violations: string[] = [];
  for (const [ns, key] of PROBES) {
    const owners = shards.filter(([, s]) => {
      const placement = s.sharding.metadata.placement(ns);
      return placement.kind === 'sharded' && !s.sharding.criticalSection.blocks(ns, 'write') && placement.ownership.ownsKey(key);
    }).map(([name]) => name);
    if (owners.length > 1) violations.push(`${ns} ${JSON.stringify(key)} is owned by ${owners.join(' and ')}, none of them in a critical section`);
  }
  return violations;
}

// Every acknowledged insert is there exactly once, nothing was applied twice, and each item's
// counter holds every acknowledged increment and at most the ones left in doubt.
export function checkItems(model: Model, docs: readonly Doc[]): string[] {
  const violations: string[] = [];
  const seen = new Map<string, Doc[]>();
  for (const d of docs) seen.set(String(d._id), [...(seen.get(String(d._id)) ?? []), d]);
  for (const [id, found] of seen) {
    const record = model.items.get(id);
    if (record === undefined) violations.push(`item ${id} was never inserted`);
    if (found.length > 1) violations.push(`item ${id} is there ${found.length} times`);
  }
  for (const [id, record] of model.items) {
    const found = seen.get(id)?.[0];
    if (found === undefined) {
      if (record.insert === 'acked') violations.push(`the acknowledged insert of item ${id} was lost`);
      continue;
    }
    if (record.insert === 'refused') violations.push(`item ${id} is there although its insert was refused`);
    const n = Number(found.n);
    if (n < record.ackedIncrements) violations.push(`item ${id} counts ${n}, below its ${record.ackedIncrements} acknowledged increments`);
    if (n > record.ackedIncrements + record.unknownIncrements) violations.push(`item ${id} counts ${n}: more than its ${record.ackedIncrements} acknowledged and ${record.unknownIncrements} unknown increments (one applied twice)`);
  }
  return violations;
}

export function checkBank(docs: readonly Doc[]): string[] {
  const total = docs.reduce((sum, d) => sum + Number(d.balance), 0);
  return docs.length === ACCOUNTS && total === ACCOUNTS * OPENING_BALANCE ? [] : [`the bank ends with ${docs.length} accounts holding ${total}`];
}

// Once every session the clients used has been idle past the logical session timeout, none is left
// in config.system.sessions, and no shard keeps its retryable-write or transaction records.
export function checkSessionsExpired(sessions: readonly Doc[], stores: ReadonlyArray<readonly [string, LocalCollections, string]>): string[] {
  const ids = new Set(sessions.map((lsid) => String(lsid.id)));
  const violations: string[] = [];
  for (const [name, local, ns] of stores) {
    const left = local.find(ns).filter((d) => ids.has(String((d._id as Doc).id)));
    if (left.length > 0) violations.push(`${name} still holds ${left.length} expired sessions in ${ns}: ${left.map((d) => JSON.stringify({ ...d, _id: String((d._id as Doc).id) })).join(', ')}`);
  }
  return violations;
}
