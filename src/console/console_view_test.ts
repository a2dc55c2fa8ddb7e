import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long } from 'bson';
import type { ClusterSample, NodeSample } from './cluster_poller.js';
import { topologyPanel } from './console_view.js';

const node = (name: string, replSet?: NodeSample['replSet']): NodeSample => ({ name, host: `${name}/a:1,b:2,c:3`, status: { version: '7.0.0', uptime: 5, connections: { current: 2 } }, pingMs: 1, ops: [], ...(replSet === undefined ? {} : { replSet }) });

test("the topology panel shows each set's members with their state and lag, its term and when its primary was elected", () => {
  const t = (s: number) => new Date(Date.UTC(2026, 11, 6, 12, 0, s));
  const status = {
    set: 'rs0', term: Long.fromNumber(3),
    members: [
      { name: 'a:1', stateStr: 'PRIMARY', health: 1, optimeDate: t(40), electionDate: t(1) },
      { name: 'b:2', stateStr: 'SECONDARY', health: 1, optimeDate: t(37) },
      { name: 'c:3', stateStr: '(not reachable/healthy)', health: 0, optimeDate: t(2) },
    ],
  };
  const sample = { timeMs: 0, config: node('config'), shards: [{ ...node('rs0', status), doc: { _id: 'rs0' } }], routers: [] } as unknown as ClusterSample;
  const panel = topologyPanel(sample);
  assert.equal((panel.config as { replicaSet: unknown }).replicaSet, null);
  assert.deepEqual((panel.shards as Array<{ replicaSet: unknown }>)[0]!.replicaSet, {
    set: 'rs0', term: 3, electedAt: t(1).toISOString(),
    members: [
      { host: 'a:1', state: 'PRIMARY', up: true, lagSecs: 0 },
      { host: 'b:2', state: 'SECONDARY', up: true, lagSecs: 3 },
      { host: 'c:3', state: '(not reachable/healthy)', up: false, lagSecs: null },
    ],
  });
});
