import { Long } from 'bson';
import type { Doc } from '../../../src/bson/values.js';
import { succeeded, type SimDriver } from './sim_driver.js';

// What the workloads run against, and what they record for the checks.
export interface WorkloadEnv {
  readonly driver: SimDriver;
  readonly random: () => number;
  sleep(ms: number): Promise<void>;
  stopped(): boolean;
  readonly shardNames: readonly string[];
  readonly model: Model;
  violation(message: string): void;
}

// What the clients were told: the items they inserted and the increments acknowledged or left
// in doubt, per item.
export interface Model {
  readonly items: Map<string, ItemRecord>;
  bankReads: number;
  transfers: { committed: number; failed: number };
  // Every session the clients used.
  readonly sessions: Doc[];
}

export interface ItemRecord {
  readonly k: number;
  insert: 'acked' | 'refused' | 'unknown';
  ackedIncrements: number;
  unknownIncrements: number;
}

export const ITEMS_NS = 'app.items';
export const ACCOUNTS = 6;
export const OPENING_BALANCE = 100;
export const KEY_SPACE = 1000;

const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

// Inserts and increments on app.items (sharded on k) through both routers, each a retryable write.
export async function itemsWorkload(env: WorkloadEnv, worker: number): Promise<void> {
  const { driver, random, model } = env;
  const session = { lsid: driver.newLsid(), txnNumber: 0 };
  model.sessions.push(session.lsid);
  const mine: string[] = [];
  for (let n = 0; !env.stopped(); n++) {
    if (mine.length === 0 || random() < 0.35) {
      const _id = `w${worker}-${n}`;
      const k = Math.floor(random() * KEY_SPACE);
      const record: ItemRecord = { k, insert: 'unknown', ackedIncrements: 0, unknownIncrements: 0 };
      model.items.set(_id, record);
      mine.push(_id);
      const { fate, reply } = await driver.retryableWrite('app', { insert: 'items', documents: [{ _id, k, n: 0 }] }, session);
      record.insert = fate === 'acked' && reply?.n === 1 ? 'acked' : fate === 'refused' ? 'refused' : 'unknown';
    } else {
      const _id = pick(random, mine);
      const record = model.items.get(_id)!;
      const { fate, reply } = await driver.retryableWrite('app', { update: 'items', updates: [{ q: { _id, k: record.k }, u: { $inc: { n: 1 } } }] }, session);
      if (fate === 'acked' && reply?.nModified === 1) record.ackedIncrements += 1;
      else if (fate === 'unknown') record.unknownIncrements += 1;
    }
    await env.sleep(Math.floor(random() * 40));
  }
}

// One session's transactions until the workloads stop, each on a router of its own choosing.
function* transactions(env: WorkloadEnv): Generator<{ router: string; txn: Doc }> {
  const lsid = env.driver.newLsid();
  env.model.sessions.push(lsid);
  for (let txnNumber = 1; !env.stopped(); txnNumber++) {
    yield { router: env.driver.router(), txn: { lsid, txnNumber: Long.fromNumber(txnNumber), autocommit: false } };
  }
}

// Transfers between accounts in transactions: the total never changes.
export async function transferWorkload(env: WorkloadEnv): Promise<void> {
  const { driver, random, model } = env;
  for (const { router, txn } of transactions(env)) {
    const from = Math.floor(random() * ACCOUNTS);
    const to = (from + 1 + Math.floor(random() * (ACCOUNTS - 1))) % ACCOUNTS;
    const amount = 1 + Math.floor(random() * 10);
    const debit = await driver.send(router, 'bank', { update: 'accounts', updates: [{ q: { _id: from }, u: { $inc: { balance: -amount } } }], ...txn, startTransaction: true });
    const credit = succeeded(debit) ? await driver.send(router, 'bank', { update: 'accounts', updates: [{ q: { _id: to }, u: { $inc: { balance: amount } } }], ...txn }) : debit;
    if (!succeeded(credit)) {
      await driver.send(router, 'admin', { abortTransaction: 1, ...txn });
      model.transfers.failed += 1;
    } else if (await commitWithRetries(env, router, txn)) {
      model.transfers.committed += 1;
    } else {
      model.transfers.failed += 1;
    }
    await env.sleep(Math.floor(random() * 30));
  }
}

// commitTransaction is retried as the driver retries it (UnknownTransactionCommitResult).
async function commitWithRetries(env: WorkloadEnv, router: string, txn: Doc): Promise<boolean> {
  for (let attempt = 0; attempt < 4; attempt++) {
    const outcome = await env.driver.send(router, 'admin', { commitTransaction: 1, ...txn });
    if (succeeded(outcome)) return true;
    const labels = Array.isArray(outcome.reply?.errorLabels) ? outcome.reply.errorLabels : [];
    if (outcome.reply !== undefined && !labels.includes('UnknownTransactionCommitResult') && !labels.includes('RetryableWriteError')) return false;
    await env.sleep(100);
  }
  return false;
}

// Snapshot reads of every account in a transaction: each one that succeeds must see the total.
export async function bankReaderWorkload(env: WorkloadEnv): Promise<void> {
  const { driver, random, model } = env;
  for (const { router, txn } of transactions(env)) {
    const read = await driver.send(router, 'bank', { find: 'accounts', filter: {}, batchSize: 100, ...txn, startTransaction: true, readConcern: { level: 'snapshot' } });
    if (succeeded(read) && read.reply !== undefined) {
      const docs = (read.reply.cursor as Doc).firstBatch as Doc[];
      const total = docs.reduce((sum, d) => sum + Number(d.balance), 0);
      model.bankReads += 1;
      if (docs.length !== ACCOUNTS || total !== ACCOUNTS * OPENING_BALANCE) {
        env.violation(`a snapshot of the bank saw ${docs.length} accounts holding ${total}, not ${ACCOUNTS} holding ${ACCOUNTS * OPENING_BALANCE}: ${JSON.stringify(docs.map((d) => [d._id, d.balance]))}`);
      }
    }
    await driver.send(router, 'admin', { abortTransaction: 1, ...txn });
    await env.sleep(100 + Math.floor(random() * 200));
  }
}

// Migrations and splits on app.items and bank.accounts, beside the balancer's own.
export async function moverWorkload(env: WorkloadEnv): Promise<void> {
  const { driver, random } = env;
  while (!env.stopped()) {
    await env.sleep(300 + Math.floor(random() * 1000));
    const router = driver.router();
    if (random() < 0.3) {
      await driver.send(router, 'admin', { split: ITEMS_NS, middle: { k: Math.floor(random() * KEY_SPACE) } });
      continue;
    }
    const ns = random() < 0.7 ? ITEMS_NS : 'bank.accounts';
    const key = ns === ITEMS_NS ? { k: Math.floor(random() * KEY_SPACE) } : { _id: Math.floor(random() * ACCOUNTS) };
    await driver.send(router, 'admin', { moveChunk: ns, find: key, to: pick(random, env.shardNames) }, 60_000);
  }
}

// DDL on a database of its own, from both routers at once: creates, shardings, renames, drops.
export async function ddlStormWorkload(env: WorkloadEnv): Promise<void> {
  const { driver, random } = env;
  const names = ['a', 'b', 'c'];
  while (!env.stopped()) {
    await env.sleep(200 + Math.floor(random() * 800));
    const router = driver.router();
    const coll = pick(random, names);
    const r = random();
    if (r < 0.2) await driver.send(router, 'ddl', { create: coll });
    else if (r < 0.4) await driver.send(router, 'admin', { shardCollection: `ddl.${coll}`, key: { x: 1 } }, 60_000);
    else if (r < 0.55) await driver.send(router, 'ddl', { insert: coll, documents: [{ x: Math.floor(random() * 100) }] });
    else if (r < 0.7) await driver.send(router, 'admin', { renameCollection: `ddl.${coll}`, to: `ddl.${pick(random, names)}`, dropTarget: random() < 0.5 }, 60_000);
    else if (r < 0.9) await driver.send(router, 'ddl', { drop: coll }, 60_000);
    else await driver.send(router, 'ddl', { dropDatabase: 1 }, 60_000);
  }
}
