import { writeFileSync } from 'node:fs';
import { it } from 'node:test';
import { MongoClient } from 'mongodb';
import { removeDir, spawnNode, type SpawnedNode } from '../helpers/spawn_node.js';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
it('probe', { timeout: 120_000 }, async () => {
  const nodes: SpawnedNode[] = [];
  for (let i = 0; i < 3; i++) nodes.push(await spawnNode({ extraArgs: ['--replSet', 'rs0'] }));
  const hosts = nodes.map((n) => `127.0.0.1:${n.port}`);
  const c = new MongoClient(nodes[0]!.uri);
  await c.db('admin').command({ replSetInitiate: { _id: 'rs0', members: hosts.map((host, _id) => ({ _id, host })), settings: { electionTimeoutMillis: 1000, heartbeatIntervalMillis: 300 } } });
  const t0 = Date.now();
  for (let i = 0; i < 8; i++) {
    await sleep(400);
    const s = await c.db('admin').command({ replSetGetStatus: 1 });
    console.log(Date.now() - t0, JSON.stringify(s.members.map((m: any) => [m.stateStr, m.optime?.ts?.toString(), m.optime?.t?.toString()])), String(s.optimes.lastCommittedOpTime.ts));
  }
  const s = await c.db('admin').command({ replSetGetStatus: 1 });
  const p = s.members.find((m: any) => m.stateStr === 'PRIMARY');
  const pc = new MongoClient(`mongodb://${p.name}/?directConnection=true`);
  try { console.log('stepdown', JSON.stringify(await pc.db('admin').command({ replSetStepDown: 5, secondaryCatchUpPeriodSecs: 1 }))); } catch (e) { console.log('stepdown error', String(e)); }
  await pc.close();
  await c.close();
  for (const n of nodes) await n.stop();
  for (const n of nodes) { writeFileSync(`/tmp/rf/log${nodes.indexOf(n)}.txt`, n.logs.join('\n')); removeDir(n.dbpath); }
});
