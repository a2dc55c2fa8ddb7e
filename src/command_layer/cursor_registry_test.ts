import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import { ErrorCodes } from '../base/error_codes.js';
import { SessionKillerMatcher } from '../sessions/kill_sessions.js';
import { sessionIdOf, type LogicalSessionId } from '../sessions/session_id.js';
import { CursorManager } from './cursor_manager.js';
import { systemClock } from '../base/clock.js';
import { ClusterCursorManager, type ClusterCursor } from '../router/cluster_cursor_manager.js';

// A node's cursor manager and a router's keep their cursors' sessions and owners in one registry:
// the same cases run over both, each opening cursors of three documents read one at a time.
interface Manager {
  open(ns: string): Promise<Long>;
  getMore(id: Long, ns: string): Promise<unknown>;
  killSessions(matcher: SessionKillerMatcher): Promise<number>;
  registry: CursorManager | ClusterCursorManager;
}

const docs = (): Doc[] => [{ _id: 1 }, { _id: 2 }, { _id: 3 }];

function nodeManager(): Manager {
  const cursors = new CursorManager(systemClock);
  return {
    registry: cursors,
    open: async (ns) => cursors.firstBatch(ns, docs().map((doc) => ({ doc })), 1).cursorId,
    getMore: async (id, ns) => cursors.getMore(id, ns, 1),
    killSessions: async (matcher) => cursors.killCursorsWithMatchingSessions(matcher),
  };
}

// The router's merged cursor over documents in hand, as a merge of shard cursors gives them.
function merged(): ClusterCursor {
  const left = docs();
  return { next: () => Promise.resolve(left.shift()), close: () => Promise.resolve() };
}

function routerManager(): Manager {
  const cursors = new ClusterCursorManager(systemClock);
  return {
    registry: cursors,
    open: async (ns) => ((await cursors.firstBatch(ns, merged(), 1)).cursor as Doc).id as Long,
    getMore: (id, ns) => cursors.getMore(id, ns, 1),
    killSessions: (matcher) => cursors.killCursorsWithMatchingSessions(matcher),
  };
}

const lsid = (): LogicalSessionId => sessionIdOf({ id: new UUID() });
const keys = (sessions: LogicalSessionId[]): string[] => sessions.map((s) => s.id.toString('hex')).sort();

for (const [role, make] of [['a node', nodeManager], ['a router', routerManager]] as const) {
  describe(`the cursor registry of ${role}`, () => {
    it('knows each open cursor\'s session and owner, and forgets them when it closes', async () => {
      const m = make();
      const id = await m.open('t.c');
      assert.equal(m.registry.sessionOf(Long.fromNumber(42)), undefined);
      assert.equal(m.registry.sessionOf(id), null);
      assert.deepEqual(m.registry.ownerOf(id), { owner: null, ns: 't.c' });
      const session = lsid();
      m.registry.attachSession(id, session);
      m.registry.attachOwner(id, 'db.alice');
      assert.equal(m.registry.sessionOf(id), session);
      assert.deepEqual(m.registry.ownerOf(id), { owner: 'db.alice', ns: 't.c' });
      assert.equal(m.registry.openCount, 1);
      await m.getMore(id, 't.c');
      await m.getMore(id, 't.c');
      assert.equal(m.registry.openCount, 0);
      assert.equal(m.registry.sessionOf(id), undefined);
      assert.equal(m.registry.ownerOf(id), undefined);
    });

    it('lists the sessions with open cursors, and kills only the cursors of the sessions matched', async () => {
      const m = make();
      const [one, two] = [lsid(), lsid()];
      const [a, b, c] = [await m.open('t.a'), await m.open('t.b'), await m.open('t.c')];
      m.registry.attachSession(a, one);
      m.registry.attachSession(b, two);
      assert.deepEqual(keys(m.registry.sessions()), keys([one, two]));
      assert.equal(await m.killSessions(new SessionKillerMatcher([{ lsid: one }])), 1);
      assert.deepEqual(keys(m.registry.sessions()), keys([two]));
      await assert.rejects(m.getMore(a, 't.a'), { code: ErrorCodes.CursorNotFound });
      assert.equal(m.registry.openCount, 2);
      assert.equal(m.registry.sessionOf(c), null);
    });
  });
}
