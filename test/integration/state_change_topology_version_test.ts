import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError, type ServerDescriptionChangedEvent } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { until } from '../helpers/spawn_replset.js';
import { withProcesses } from '../helpers/fixtures.js';

// A replica set member's NotPrimaryError replies carry its topologyVersion, as mongod's do, however
// the error came about (here the failCommand fail point, as the driver specifications' retry tests
// raise them); its ShutdownErrors and other errors carry none. The driver takes such an error with
// the topologyVersion it already has for stale: it neither marks the member Unknown nor waits for
// a new check of it before it retries.
const NOT_PRIMARY_ERRORS = [10107, 13435, 13436, 189, 11602];
const OTHER_ERRORS = [11600, 91, 2];

describe('the topologyVersion of state change errors', () => {
  let uri: string;
  let admin: MongoClient;
  withProcesses(async (p) => {
    const set = await p.replicaSet({ members: 1, node: () => ({ extraArgs: ['--enableTestCommands'] }) });
    uri = set.uri;
    // Polling: the ShutdownErrors below mark the member Unknown, and the next command waits for a
    // check, which a streaming monitor would not make until heartbeatFrequencyMS (10 s) ended.
    admin = p.connect(set.uri, { serverMonitoringMode: 'poll' });
    p.beforeStop(() => admin.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' }));
  });

  const failNext = (data: AnyDoc) => admin.db('admin').command({ configureFailPoint: 'failCommand', mode: { times: 1 }, data: { failCommands: ['insert'], ...data } });
  // The reply as the server sent it (runCommand is never retried).
  const insertReply = async (): Promise<AnyDoc> => {
    try {
      return await admin.db('tv').command({ insert: 'c', documents: [{}] });
    } catch (err) {
      assert.ok(err instanceof MongoServerError, String(err));
      return err.errorResponse as AnyDoc;
    }
  };

  it("carries the member's topologyVersion on a NotPrimaryError, and on a write concern error of one; none on other errors", async () => {
    const { topologyVersion } = await admin.db('admin').command({ hello: 1 });
    for (const code of NOT_PRIMARY_ERRORS) {
      await failNext({ errorCode: code });
      const reply = await insertReply();
      assert.equal(reply.code, code);
      assert.deepEqual(reply.topologyVersion, topologyVersion, `code ${code}`);
    }
    await failNext({ writeConcernError: { code: 189, errmsg: 'stepped down' } });
    const reply = await insertReply();
    assert.deepEqual([reply.ok, reply.writeConcernError?.code, reply.topologyVersion], [1, 189, topologyVersion]);
    for (const code of OTHER_ERRORS) {
      await failNext({ errorCode: code });
      const other = await insertReply();
      assert.equal(other.code, code);
      assert.equal(other.topologyVersion, undefined, `code ${code}`);
    }
  });

  it('lets a driver whose monitor streams hello retry a write failed with PrimarySteppedDown at once, the member never marked Unknown', { timeout: 60_000 }, async () => {
    // A check every 30 s: without the topologyVersion the retry would wait that long for one.
    const client = new MongoClient(uri, { heartbeatFrequencyMS: 30_000, serverSelectionTimeoutMS: 60_000 });
    const changes: ServerDescriptionChangedEvent[] = [];
    let streaming = false;
    client.on('serverHeartbeatStarted', (e) => { streaming ||= e.awaited; });
    client.on('serverDescriptionChanged', (e) => changes.push(e));
    try {
      const coll = client.db('tv').collection<{ _id: number; x: number }>('retried');
      await coll.insertOne({ _id: 1, x: 0 });
      await until('the monitor streaming hello', async () => (streaming ? true : undefined), 10_000, 50);
      changes.length = 0;
      await admin.db('admin').command({
        configureFailPoint: 'failCommand', mode: { times: 1 }, data: { failCommands: ['update'], errorCode: 189, errorLabels: ['RetryableWriteError'] },
      });
      const started = Date.now();
      await coll.updateOne({ _id: 1 }, { $inc: { x: 1 } });
      const took = Date.now() - started;
      assert.deepEqual(await coll.findOne({ _id: 1 }), { _id: 1, x: 1 });
      assert.deepEqual(changes.map((e) => e.newDescription.type).filter((t) => t === 'Unknown'), []);
      assert.ok(took < 10_000, `the retry took ${took} ms`);
    } finally {
      await client.close();
    }
  });
});
