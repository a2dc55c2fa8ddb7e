import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import type { Network } from '../wire/network.js';
import { lsidDoc, sessionIdOf, sessionKey } from './session_id.js';
import { SessionsCollectionSharded } from './sessions_collection_sharded.js';

// The config server as a network: what it was sent, and the answers a test gives it.
function configServer(answer: (cmd: Doc) => Doc): Network & { sent: Doc[] } {
  const sent: Doc[] = [];
  return {
    sent,
    command(host: string, db: string, cmd: Doc) {
      sent.push({ host, db, ...cmd });
      return Promise.resolve(answer(cmd));
    },
    commandRaw: () => Promise.reject(new Error('not used')),
    forwardMessage: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
  };
}

describe('config.system.sessions from a router or a shard', () => {
  const [a, b] = [0, 1].map(() => sessionIdOf({ id: new UUID() }));

  it("sends MongoDB's refresh and removal to the config server: unordered, upserting lastUse $$NOW, majority", async () => {
    const network = configServer(() => ({ n: 2, ok: 1 }));
    const sessions = new SessionsCollectionSharded(network, 'cfg:1');
    await sessions.refreshSessions([a, b]);
    await sessions.removeRecords([a]);
    await sessions.refreshSessions([]);
    assert.deepEqual(network.sent, [
      {
        host: 'cfg:1', db: 'config', update: 'system.sessions', ordered: false, writeConcern: { w: 'majority', wtimeout: 60_000 },
        updates: [a, b].map((l) => ({ q: { _id: lsidDoc(l) }, u: [{ $set: { lastUse: '$$NOW' } }], upsert: true })),
      },
      { host: 'cfg:1', db: 'config', delete: 'system.sessions', ordered: false, writeConcern: { w: 'majority', wtimeout: 60_000 }, deletes: [{ q: { _id: lsidDoc(a) }, limit: 1 }] },
    ]);
  });

  it('finds which sessions have no record, and fails on a write error', async () => {
    const network = configServer((cmd) => (cmd.find !== undefined
      ? { cursor: { firstBatch: [{ _id: lsidDoc(b) }], id: 0, ns: 'config.system.sessions' }, ok: 1 }
      : { n: 0, writeErrors: [{ index: 0, code: 11000, errmsg: 'E11000 duplicate key' }], ok: 1 }));
    const sessions = new SessionsCollectionSharded(network, 'cfg:1');
    assert.deepEqual((await sessions.findRemovedSessions([a, b])).map(sessionKey), [sessionKey(a)]);
    assert.deepEqual(network.sent[0]!.filter, { _id: { $in: [lsidDoc(a), lsidDoc(b)] } });
    await assert.rejects(sessions.refreshSessions([a]), { code: 11000 });
  });
});
