import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey, MongoClient, MongoServerError } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import { restartNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { spawnSetCluster, type SetCluster } from '../helpers/spawn_set_cluster.js';
import { until } from '../helpers/spawn_replset.js';

// Issue 34's crash acceptance: kill -9 of a resharding's donor shard, of its recipient shard, and
// of the config server, each held in a phase by a fail point, then restarted from its files. Each
// resharding ends committed or aborted, never both: the catalog, the documents (every acknowledged
// write present once under the resulting key), no temporary collection, no state document, no
// critical section left. Three one-member-set shards: rs0 is the database's primary (its
// ReshardCollectionCoordinator is never killed), rs1 the donor, rs2 the recipient (a zone on the
// new key places every chunk there). One cluster for every case.
const DOCS = 100;
// More than one batch of a recipient's clone (2000): the donor's crash while cloning comes with the
// clone's cursor open on it. The recipient's comes after the clone's last batch is written, before
// it is known done: it clones again over what it copied.
const CLONED_DOCS = 2100;
const SHARDS = ['rs0', 'rs1', 'rs2'];
const DONOR = 1;
const RECIPIENT = 2;
const WAIT_MS = 30_000;

type Phase = 'cloning' | 'applying' | 'blocking-writes' | 'committing';
type Victim = 'donor' | 'recipient' | 'config';

// Which fail point holds each phase open, and on which node it is set.
const HOLDS: Record<Phase, { failPoint: string; on: 'config' | number }> = {
  'cloning': { failPoint: 'reshardingPauseRecipientDuringCloning', on: RECIPIENT },
  'applying': { failPoint: 'reshardingPauseCoordinatorBeforeBlockingWrites', on: 'config' },
  'blocking-writes': { failPoint: 'reshardingPauseRecipientDuringOplogApplication', on: RECIPIENT },
  'committing': { failPoint: 'reshardingPauseBeforeTellingParticipantsToCommit', on: 'config' },
};

describe('reshardCollection survives a crash of a donor, a recipient or the config server in every phase', () => {
  let cluster: SetCluster;
  let router: MongoClient;
  const restarted: SpawnedNode[] = [];
  withProcesses(async (p) => {
    cluster = await spawnSetCluster(p, { shards: SHARDS.length, members: 1, configMembers: 1, routers: 1, args: ['--enableTestCommands'] });
    router = p.connect(cluster.routers[0]!.uri);
    // Nodes started in place of killed ones stop with the suite.
    p.beforeStop(() => Promise.all(restarted.map((n) => n.stop())));
    const admin = router.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'rc', primaryShard: SHARDS[0] });
    await admin.command({ addShardToZone: SHARDS[DONOR], zone: 'donor' });
    await admin.command({ addShardToZone: SHARDS[RECIPIENT], zone: 'recipient' });
  });

  const admin = () => router.db('admin');
  // A fresh connection to the node of set `i` (or the config server's), closed by `fn`'s end.
  async function onNode<T>(i: number | 'config', fn: (c: MongoClient) => Promise<T>): Promise<T> {
    const set = i === 'config' ? cluster.config : cluster.shards[i]!;
    const c = new MongoClient(`mongodb://${set.hosts[0]}/?directConnection=true`, { serverSelectionTimeoutMS: WAIT_MS });
    try {
      return await fn(c);
    } finally {
      await c.close();
    }
  }

  // `whileDown` runs between the kill and the restart.
  async function kill9AndRestart(victim: Victim, whileDown: () => Promise<void> = async () => {}): Promise<void> {
    const set = victim === 'config' ? cluster.config : cluster.shards[victim === 'donor' ? DONOR : RECIPIENT]!;
    const node = set.nodes[0]!;
    await node.kill9();
    await whileDown();
    const back = await restartNode(node, { ...(victim === 'config' ? { role: 'config' as const } : {}), extraArgs: ['--replSet', set.name, '--enableTestCommands'] });
    restarted.push(back);
    set.nodes[0] = back;
    await onNode(victim === 'config' ? 'config' : victim === 'donor' ? DONOR : RECIPIENT, (c) => until(`${set.name} primary again`, async () => {
      const hello = await c.db('admin').command({ hello: 1 });
      return hello.isWritablePrimary === true ? true : undefined;
    }, WAIT_MS, 50));
  }

  // Acknowledged inserts, updates (of the new key among them) and deletes through the router.
  async function writeSome(model: Map<number, AnyDoc>, from: number): Promise<void> {
    const docs = Array.from({ length: 10 }, (_, i) => ({ _id: from + i, x: from + i, k: from + i }));
    await current().insertMany(docs);
    for (const d of docs) model.set(d._id, d);
    const ids = [...model.keys()].slice(0, 6);
    for (const id of ids.slice(0, 4)) {
      const d = model.get(id)!;
      const k = (d.k as number) + 1000;
      await current().updateOne({ _id: id, x: d.x }, { $set: { k } });
      model.set(id, { ...d, k });
    }
    for (const id of ids.slice(4)) {
      await current().deleteOne({ _id: id, x: model.get(id)!.x });
      model.delete(id);
    }
  }

  let currentNs = '';
  const current = () => router.db('rc').collection<AnyDoc>(currentNs.slice(3));

  async function check(ns: string, model: Map<number, AnyDoc>, sourceUUID: unknown): Promise<'committed' | 'aborted'> {
    const entry = await router.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never });
    const committed = JSON.stringify(entry?.key) === JSON.stringify({ k: 1 });
    if (committed) assert.notDeepEqual(entry?.uuid, sourceUUID, 'a committed resharding gives the collection a new UUID');
    else {
      assert.deepEqual(entry?.key, { x: 1 }, 'the key is the old one or the new one');
      assert.deepEqual(entry?.uuid, sourceUUID, 'an aborted resharding keeps the UUID');
    }
    const chunks = await router.db('config').collection<AnyDoc>('chunks').find({ uuid: entry!.uuid }).toArray();
    assert.deepEqual([...new Set(chunks.map((c) => c.shard))], [SHARDS[committed ? RECIPIENT : DONOR]], 'the chunks of the resulting key are on one shard');
    const expected = [...model.values()].sort((a, b) => a._id - b._id);
    assert.deepEqual(await current().find({}).sort({ _id: 1 }).toArray(), expected, 'every acknowledged write, once');
    assert.equal(await current().countDocuments(), expected.length, 'counts are exact');
    const coll = ns.slice(3);
    for (let i = 0; i < SHARDS.length; i++) {
      await onNode(i, async (c) => {
        const names = (await c.db('rc').listCollections({}, { nameOnly: true }).toArray()).map((n) => n.name);
        assert.deepEqual(names.filter((n) => n.startsWith('system.resharding.')), [], `no temporary collection on ${SHARDS[i]}`);
        const owner = committed ? RECIPIENT : DONOR;
        const held = names.includes(coll) ? await c.db('rc').collection(coll).countDocuments() : 0;
        assert.equal(held, i === owner ? expected.length : 0, `${SHARDS[i]} holds ${held}`);
        assert.equal(await c.db('config').collection('localReshardingOperations.recipient').countDocuments(), 0, `no recipient document on ${SHARDS[i]}`);
        assert.equal(await c.db('config').collection('collection_critical_sections').countDocuments(), 0, `no critical section held on ${SHARDS[i]}`);
      });
    }
    const consistency = await admin().command({ checkMetadataConsistency: 1 });
    assert.deepEqual((consistency.cursor as AnyDoc).firstBatch, []);
    // Writes go on under the resulting key.
    await current().insertOne({ _id: -1, x: -1, k: -1 });
    assert.equal(await current().countDocuments({ _id: -1 }), 1);
    return committed ? 'committed' : 'aborted';
  }

  let n = 0;
  // `abortWhileDown`: abortReshardCollection is sent once the victim is down, and the coordinator's
  // decision is persisted before it starts again.
  async function crashIn(phase: Phase, victim: Victim, abortWhileDown = false): Promise<{ outcome: 'committed' | 'aborted'; answer: unknown }> {
    const ns = `rc.c${n++}`;
    currentNs = ns;
    // The zone places the collection's one chunk on the donor from the start.
    await admin().command({ updateZoneKeyRange: ns, min: { x: new MinKey() }, max: { x: new MaxKey() }, zone: 'donor' });
    await admin().command({ shardCollection: ns, key: { x: 1 } });
    const model = new Map<number, AnyDoc>();
    const docs = Array.from({ length: phase === 'cloning' && victim === 'donor' ? CLONED_DOCS : DOCS }, (_, i) => ({ _id: i, x: i, k: i }));
    await current().insertMany(docs);
    for (const d of docs) model.set(d._id, d);
    const sourceUUID = (await router.db('config').collection<AnyDoc>('collections').findOne({ _id: ns as never }))?.uuid;

    const hold = HOLDS[phase];
    const count = await onNode(hold.on, async (c) => (await c.db('admin').command({ configureFailPoint: hold.failPoint, mode: 'alwaysOn' })).count as number);
    const answer = admin().command({
      reshardCollection: ns, key: { k: 1 }, zones: [{ min: { k: new MinKey() }, max: { k: new MaxKey() }, zone: 'recipient' }],
    }).then(() => 'ok', (err: unknown) => err);
    await onNode(hold.on, (c) => c.db('admin').command({ waitForFailPoint: hold.failPoint, timesEntered: count + 1, maxTimeMS: WAIT_MS }));
    // Writes are admitted until the donors block them.
    const writing = phase === 'cloning' || phase === 'applying';
    if (writing) await writeSome(model, 10_000);
    let aborting: Promise<unknown> = Promise.resolve();
    await kill9AndRestart(victim, async () => {
      if (!abortWhileDown) return;
      aborting = admin().command({ abortReshardCollection: ns }).then(() => undefined, (err: unknown) => err);
      await until('the abort decision persisted', async () => {
        const doc = await router.db('config').collection<AnyDoc>('reshardingOperations').findOne({ ns });
        return doc?.state === 'aborting' ? true : undefined;
      }, WAIT_MS, 50);
    });
    if (!writing && victim !== 'config') {
      // The shard restarted holding the critical section it held when killed: writes stay blocked.
      const held = await onNode(victim === 'donor' ? DONOR : RECIPIENT, (c) => c.db('config').collection('collection_critical_sections').countDocuments({ _id: ns as never }));
      assert.equal(held, 1, `the ${victim}'s critical section is taken again at its restart`);
    }
    if (writing) await writeSome(model, 20_000);
    // A fail point of the node killed went with it.
    const holder = victim === 'config' ? 'config' : victim === 'donor' ? DONOR : RECIPIENT;
    if (hold.on !== holder) await onNode(hold.on, (c) => c.db('admin').command({ configureFailPoint: hold.failPoint, mode: 'off' }));
    assert.equal(await aborting, undefined, 'abortReshardCollection answered ok');
    const answered = await answer;
    await until('the resharding ended', async () => ((await router.db('config').collection('reshardingOperations').countDocuments()) === 0 ? true : undefined), WAIT_MS, 100);
    const outcome = await check(ns, model, sourceUUID);
    if (answered === 'ok') assert.equal(outcome, 'committed', 'reshardCollection answered ok: committed');
    else if (answered instanceof MongoServerError && answered.codeName !== 'InterruptedDueToReplStateChange') assert.equal(outcome, 'aborted', `reshardCollection answered ${answered.codeName}: aborted`);
    return { outcome, answer: answered instanceof Error ? answered.message : answered };
  }

  // A donor restarted in the middle of a recipient's clone has lost its snapshot history (kept in
  // memory) and the clone's cursor: the recipient fails and the coordinator aborts. Every other
  // crash is resumed and the resharding commits.
  for (const phase of ['cloning', 'applying', 'blocking-writes', 'committing'] as const) {
    for (const victim of ['recipient', 'donor'] as const) {
      const expected = phase === 'cloning' && victim === 'donor' ? 'aborted' : 'committed';
      it(`kill -9 of the ${victim} while ${phase}: ${expected}, every acknowledged write once under the resulting key`, { timeout: 90_000 }, async (t) => {
        const { outcome, answer } = await crashIn(phase, victim);
        t.diagnostic(`${outcome}; reshardCollection answered ${String(answer)}`);
        assert.equal(outcome, expected);
      });
    }
  }

  it('kill -9 of the recipient while applying, aborted while it is down: at its restart it drops its temporary collection', { timeout: 90_000 }, async (t) => {
    const { outcome, answer } = await crashIn('applying', 'recipient', true);
    t.diagnostic(`${outcome}; reshardCollection answered ${String(answer)}`);
    assert.equal(outcome, 'aborted');
  });

  it('kill -9 of the config server while applying: the coordinator resumes from its document and commits', { timeout: 90_000 }, async (t) => {
    const { outcome, answer } = await crashIn('applying', 'config');
    t.diagnostic(`${outcome}; reshardCollection answered ${String(answer)}`);
    assert.equal(outcome, 'committed');
  });
});
