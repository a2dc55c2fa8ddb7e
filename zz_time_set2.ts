import { spawnNode } from './test/helpers/spawn_node.js';
import { MongoClient } from 'mongodb';
const t0 = Date.now();
const nodes = [];
for (let i = 0; i < 3; i++) nodes.push(await spawnNode({ extraArgs: ['--replSet', 'rs0'] }));
const hosts = nodes.map((n) => `127.0.0.1:${n.port}`);
const first = new MongoClient(`mongodb://${hosts[0]}/?directConnection=true`);
await first.db('admin').command({ replSetInitiate: { _id: 'rs0', members: hosts.map((host, i) => ({ _id: i, host })) } });
console.log('initiated', Date.now() - t0);
for (let a = 0; ; a++) {
  const t = Date.now();
  try { await first.db('admin').command({ replSetStepUp: 1 }); console.log('stepUp ok', a, Date.now() - t0, 'took', Date.now() - t); break; }
  catch (e) { const st = await first.db('admin').command({ replSetGetStatus: 1 }).catch(() => null); console.log('stepUp failed', a, Date.now() - t0, 'took', Date.now() - t, (e as Error).message, st ? (st.members as any[]).map((m) => m.stateStr).join(',') : ''); }
  await new Promise((r) => setTimeout(r, 200));
}
await first.close();
for (const n of nodes) await n.stop();
