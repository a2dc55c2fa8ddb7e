import type { MongoClient } from 'mongodb';
import { DEFAULT_LOADED_OPS_PER_SECOND } from '../../src/migration/clone_pacer.js';
import type { AnyDoc } from './spawn_node.js';

export async function donorStatistics(donor: MongoClient): Promise<AnyDoc> {
  const status = await donor.db('admin').command({ serverStatus: 1 });
  return (status.shardingStatistics as AnyDoc).docshard as AnyDoc;
}

// A donor judges its load over about the last second (src/migration/user_load_meter.ts): waits
// until its reading is on the side a move is meant to see.
export async function untilDonorReads(donor: MongoClient, loaded: boolean, timeoutMs = 20_000): Promise<void> {
  for (let waited = 0; waited < timeoutMs; waited += 50) {
    const rate = (await donorStatistics(donor)).userOpsPerSecond as number;
    if (rate >= DEFAULT_LOADED_OPS_PER_SECOND === loaded) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the donor never read as ${loaded ? 'loaded' : 'idle'}`);
}
