import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { DonorEffect } from './donor_effects.js';
import { donorInitialState, donorStep, isDonorDone, type DonorEvent, type DonorState } from './donor_state_machine.js';
import {
  migrationCoordinatorDocumentFromBSON,
  migrationCoordinatorDocumentToBSON,
  type MigrationDecision,
} from './migration_coordinator_document.js';
import { rangeDeletionTaskFromBSON, rangeDeletionTaskToBSON } from './range_deletion_task.js';
import type { RecipientEffect } from './recipient_effects.js';
import { recipientInitialState, recipientStep, type RecipientEvent, type RecipientState } from './recipient_state_machine.js';
import { checkDonorOrdering, coordinatorDoc, rangeOwnerAfter } from './migration_test_util.js';

// A tiny deterministic world that runs the real donor and recipient machines: two shards' disks
// (coordinator documents, range deletion tasks, the range's documents), a config server that
// commits only at the expected chunk version, and a FIFO network. The range deleter runs as soon
// as a task is ready, so anything copied into a range after its deletion would be caught.
// Crashes lose a process's memory, queues and in-flight replies, never its disk.

const doc = coordinatorDoc();
const KEY = doc._id.toHexString();
const IDS = [1, 2, 3, 4, 5];
const PRE_MAJOR = doc.preMigrationChunkVersion.major;

type ConfigMode = 'normal' | 'replyLostAfterCommit' | 'replyLostBeforeCommit' | 'commitDelayed';
type Who = 'donor' | 'recipient';

interface Incarnation {
  state: DonorState;
  log: DonorEffect[];
  recovered?: { decision: MigrationDecision | undefined };
}

class World {
  donorCoord = new Map<string, Doc>();
  donorTasks = new Map<string, Doc>();
  recipientTasks = new Map<string, Doc>();
  donorData = new Set(IDS);
  recipientData = new Set<number>();
  config = { owner: doc.donorShardId, major: PRE_MAJOR };
  donor: Incarnation | undefined;
  incarnations: Incarnation[] = [];
  recipient: RecipientState = recipientInitialState();
  donorQueue: DonorEffect[] = [];
  recipientQueue: RecipientEffect[] = [];
  inbox: (() => void)[] = [];
  delayedCommit: (() => void) | undefined;
  cloner: { donorGen: number; remaining: number[] } | undefined;
  donorGen = 0;
  executed = 0;
  criticalSection = 'none';
  timedOut: string | undefined;

  constructor(private readonly crashes: { at: number; who: Who }[] = [], private readonly configMode: ConfigMode = 'normal') {}

  run(): this {
    this.donor = { state: donorInitialState(), log: [] };
    this.incarnations.push(this.donor);
    this.stepDonor({ type: 'start', doc, waitForDelete: false });
    for (let steps = 0; ; steps++) {
      assert.ok(steps < 10_000, 'the migration terminates');
      const who: Who | undefined = this.donorQueue.length > 0 ? 'donor' : this.recipientQueue.length > 0 ? 'recipient' : undefined;
      if (who !== undefined) {
        const crash = this.crashes.find((c) => c.at === this.executed);
        this.executed++;
        if (crash !== undefined) this.crash(crash.who);
        else if (who === 'donor') this.runDonorEffect(this.donorQueue.shift()!);
        else this.runRecipientEffect(this.recipientQueue.shift()!);
        continue;
      }
      const next = this.inbox.shift() ?? this.takeDelayedCommit() ?? this.timer();
      if (next === undefined) return this;
      next();
    }
  }

  // The driver's timer for the donor's phase fires only when nothing else can happen: a reply
  // lost with a crashed recipient is noticed this way.
  private timer(): (() => void) | undefined {
    const donor = this.donor;
    if (donor === undefined || isDonorDone(donor.state) || this.timedOut === donor.state.phase) return undefined;
    const phase = donor.state.phase;
    this.timedOut = phase;
    return () => this.stepDonor({ type: 'timeout', phase });
  }

  private takeDelayedCommit(): (() => void) | undefined {
    const commit = this.delayedCommit;
    this.delayedCommit = undefined;
    return commit;
  }

  private crash(who: Who): void {
    if (who === 'recipient') {
      this.recipient = recipientInitialState();
      this.recipientQueue = [];
      return;
    }
    this.donorGen++;
    this.donor = undefined;
    this.donorQueue = [];
    this.cloner = undefined;
    this.criticalSection = 'none';
    const persisted = this.donorCoord.get(KEY);
    if (persisted === undefined) return;
    const recoveredDoc = migrationCoordinatorDocumentFromBSON(persisted);
    this.donor = { state: donorInitialState(), log: [], recovered: { decision: recoveredDoc.decision } };
    this.incarnations.push(this.donor);
    this.stepDonor({ type: 'crashRecovered', doc: recoveredDoc });
  }

  private stepDonor(event: DonorEvent): void {
    const donor = this.donor!;
    const step = donorStep(donor.state, event);
    donor.state = step.state;
    donor.log.push(...step.effects);
    this.donorQueue.push(...step.effects);
    if (isDonorDone(step.state)) this.cloner = undefined;
  }

  // A reply reaches the donor only if the process that asked is still alive.
  private toDonor(event: DonorEvent): void {
    const gen = this.donorGen;
    this.inbox.push(() => {
      if (gen === this.donorGen && this.donor !== undefined) this.stepDonor(event);
    });
  }

  private stepRecipient(event: RecipientEvent): void {
    const step = recipientStep(this.recipient, event);
    this.recipient = step.state;
    this.recipientQueue.push(...step.effects);
  }

  private runDonorEffect(e: DonorEffect): void {
    switch (e.type) {
      case 'persistCoordinatorDoc': this.donorCoord.set(KEY, migrationCoordinatorDocumentToBSON(e.doc)); break;
      case 'persistRangeDeletionTask': this.donorTasks.set(KEY, rangeDeletionTaskToBSON(e.task)); break;
      case 'persistDecision': {
        const persisted = migrationCoordinatorDocumentFromBSON(this.donorCoord.get(KEY));
        this.donorCoord.set(KEY, migrationCoordinatorDocumentToBSON({ ...persisted, decision: e.decision }));
        break;
      }
      case 'markRangeDeletionReady': this.markReady(this.donorTasks, this.donorData); break;
      case 'deleteRangeDeletionTask': this.donorTasks.delete(KEY); break;
      case 'deleteCoordinatorDoc': this.donorCoord.delete(KEY); break;
      case 'sendRecvChunkStart': {
        this.cloner = { donorGen: this.donorGen, remaining: [...this.donorData] };
        const request = { migrationId: e.doc._id, nss: e.doc.nss, collectionUuid: e.doc.collectionUuid, donorShardId: e.doc.donorShardId, recipientShardId: e.doc.recipientShardId, range: e.doc.range };
        this.inbox.push(() => this.stepRecipient({ type: 'recvChunkStart', request, overlappingRangeDeletions: this.recipientTasks.size }));
        break;
      }
      case 'pollRecvChunkStatus': this.inbox.push(() => this.stepRecipient({ type: 'recvChunkStatus', migrationId: e.migrationId })); break;
      case 'sendRecvChunkCommit': this.inbox.push(() => this.stepRecipient({ type: 'recvChunkCommit', migrationId: e.migrationId })); break;
      case 'sendCommitToConfig': this.sendCommit(); break;
      case 'readConfigChunkOwner': this.toDonor({ type: 'configChunkOwnerRead', shardId: this.config.owner }); break;
      case 'sendEnsureChunkVersionIsGreaterThan':
        if (this.config.owner === doc.donorShardId) this.config.major = Math.max(this.config.major, PRE_MAJOR + 1);
        break;
      case 'sendRecvChunkAbort': this.abortRecipient(); break;
      case 'markRecipientRangeDeletionReady': this.markReady(this.recipientTasks, this.recipientData); break;
      case 'deleteRecipientRangeDeletionTask': this.recipientTasks.delete(KEY); break;
      case 'enterCriticalSection': this.criticalSection = 'writes'; this.toDonor({ type: 'criticalSectionEntered' }); break;
      case 'enterCriticalSectionForReads': this.criticalSection = 'reads'; this.toDonor({ type: 'criticalSectionEntered' }); break;
      case 'exitCriticalSection': this.criticalSection = 'none'; break;
      case 'refreshFilteringMetadata': case 'hintRecipientRefresh': case 'awaitRangeDeletion': break;
    }
  }

  // The range deleter, run at once: every document of the range goes, then the task.
  private markReady(tasks: Map<string, Doc>, data: Set<number>): void {
    const raw = tasks.get(KEY);
    if (raw === undefined) return;
    assert.equal(rangeDeletionTaskFromBSON(raw).pending, true);
    data.clear();
    tasks.delete(KEY);
  }

  // _configsvrCommitChunkMigration: idempotent, and only at the version the donor started from.
  private sendCommit(): void {
    const gen = this.donorGen;
    const commit = (): boolean => {
      if (this.config.owner === doc.recipientShardId) return true;
      if (this.config.major !== PRE_MAJOR) return false;
      this.config = { owner: doc.recipientShardId, major: PRE_MAJOR + 1 };
      return true;
    };
    const lost = new MongoError(ErrorCodes.NetworkTimeout, 'commit reply lost');
    const reply = (ok: boolean): DonorEvent => ({ type: 'configCommitReplied', reply: ok ? { outcome: 'ok' } : { outcome: 'error', error: new MongoError(ErrorCodes.ConflictingOperationInProgress, 'chunk version changed') } });
    switch (this.configMode) {
      case 'normal': this.inbox.push(() => { const ok = commit(); if (gen === this.donorGen) this.stepDonor(reply(ok)); }); break;
      case 'replyLostAfterCommit': this.inbox.push(() => { commit(); this.toDonor({ type: 'configCommitReplied', reply: { outcome: 'unknown', error: lost } }); }); break;
      case 'replyLostBeforeCommit': this.toDonor({ type: 'configCommitReplied', reply: { outcome: 'unknown', error: lost } }); break;
      // The commit reaches the config server only after everything else: after the donor timed
      // out on it, and after any recovery fenced the chunk version.
      case 'commitDelayed':
        this.delayedCommit = () => { commit(); };
        this.toDonor({ type: 'configCommitReplied', reply: { outcome: 'unknown', error: lost } });
        break;
    }
  }

  // _recvChunkAbort is acknowledged once the recipient has applied what it had queued.
  private abortRecipient(): void {
    this.stepRecipient({ type: 'recvChunkAbort', migrationId: doc._id });
    for (;;) {
      const effect = this.recipientQueue.shift();
      assert.ok(effect !== undefined, 'the recipient acknowledges the abort');
      this.runRecipientEffect(effect);
      if (effect.type === 'reply' && effect.command === '_recvChunkAbort') return;
    }
  }

  private runRecipientEffect(e: RecipientEffect): void {
    switch (e.type) {
      case 'persistRangeDeletionTask': this.recipientTasks.set(KEY, rangeDeletionTaskToBSON(e.task)); break;
      case 'createCollectionAndIndexes': case 'applyMods': case 'syncClonedDocuments': break;
      case 'applyCloneBatch': for (const d of e.documents) this.recipientData.add(deserializeDocument(d)._id as number); break;
      case 'requestCloneBatch': this.inbox.push(() => this.fromCloner((c) => ({ type: 'cloneBatch', documents: c.remaining.splice(0, 2).map((id) => serializeDocument({ _id: id })) }))); break;
      case 'requestTransferMods': this.inbox.push(() => this.fromCloner(() => ({ type: 'transferModsBatch', deleted: [], reload: [] }))); break;
      case 'reply': this.replyToDonor(e); break;
    }
  }

  // The donor's side of _migrateClone / _transferMods lives in the donor's memory.
  private fromCloner(answer: (cloner: NonNullable<World['cloner']>) => RecipientEvent): void {
    const c = this.cloner;
    if (c === undefined || c.donorGen !== this.donorGen) this.stepRecipient({ type: 'failed', error: new MongoError(ErrorCodes.HostUnreachable, 'no migration on the donor') });
    else this.stepRecipient(answer(c));
  }

  private replyToDonor(e: Extract<RecipientEffect, { type: 'reply' }>): void {
    if (e.command === '_recvChunkAbort') return;
    if (e.result instanceof MongoError) return this.toDonor({ type: 'recipientError', error: e.result });
    if (e.command === '_recvChunkStart') return this.toDonor({ type: 'recipientAcknowledgedStart' });
    if (e.command === '_recvChunkCommit') return this.toDonor({ type: 'recipientCommitted' });
    this.toDonor({ type: 'recipientStatus', status: e.result, transferModsPending: 0 });
  }

  // The end state every run must reach, whatever crashed and when.
  check(label: string): MigrationDecision {
    assert.equal(this.donorCoord.size, 0, `${label}: the coordinator document is forgotten`);
    assert.equal(this.donorTasks.size + this.recipientTasks.size, 0, `${label}: no task is left pending`);
    assert.equal(this.criticalSection, 'none', `${label}: the critical section is released`);
    const decision: MigrationDecision = this.config.owner === doc.recipientShardId ? 'committed' : 'aborted';
    assert.equal(this.config.owner, rangeOwnerAfter(doc, decision));
    const [kept, freed] = decision === 'committed' ? [this.recipientData, this.donorData] : [this.donorData, this.recipientData];
    assert.deepEqual([...kept].sort(), IDS, `${label}: the owner (${this.config.owner}) has every document`);
    assert.equal(freed.size, 0, `${label}: the other shard has none`);
    for (const inc of this.incarnations) checkDonorOrdering(inc.log, inc.recovered);
    return decision;
  }
}

test('without faults the world commits and the recipient owns every document', () => {
  const world = new World().run();
  assert.equal(world.check('no crash'), 'committed');
  assert.equal(world.incarnations[0]!.state.phase, 'kCommitted');
});

const total = new World().run().executed;

test(`a crash of the donor before any of the ${total} effects ends committed or aborted, with one owner`, () => {
  const outcomes = new Set<MigrationDecision>();
  for (let at = 0; at < total; at++) outcomes.add(new World([{ at, who: 'donor' }]).run().check(`donor crash at ${at}`));
  assert.deepEqual([...outcomes].sort(), ['aborted', 'committed'], 'both outcomes are reached');
});

test('a crash of the recipient before any effect ends committed or aborted, with one owner', () => {
  for (let at = 0; at < total; at++) new World([{ at, who: 'recipient' }]).run().check(`recipient crash at ${at}`);
});

test('a donor that crashes again while recovering still finishes the migration', () => {
  for (let at = 0; at < total; at++) {
    for (const again of [1, 2, 3]) new World([{ at, who: 'donor' }, { at: at + again, who: 'donor' }]).run().check(`donor crashes at ${at} and ${at + again}`);
  }
});

test('both shards crashing at different points still leave exactly one owner', () => {
  for (let at = 0; at < total; at += 2) new World([{ at, who: 'recipient' }, { at: at + 1, who: 'donor' }]).run().check(`recipient at ${at}, donor at ${at + 1}`);
});

test('a lost commit reply is resolved from the config server: committed if the commit landed', () => {
  assert.equal(new World([], 'replyLostAfterCommit').run().check('reply lost after commit'), 'committed');
  assert.equal(new World([], 'replyLostBeforeCommit').run().check('reply lost before commit'), 'aborted');
});

test('a commit that reaches the config server after the fence fails, so an abort stands', () => {
  const world = new World([], 'commitDelayed').run();
  assert.equal(world.check('delayed commit'), 'aborted');
  assert.equal(world.config.major, PRE_MAJOR + 1, 'the fence bumped the chunk version');
});

test('a config server that loses the reply and then the donor crashing still converge', () => {
  for (const mode of ['replyLostAfterCommit', 'replyLostBeforeCommit', 'commitDelayed'] as const) {
    for (let at = 0; at < total; at++) new World([{ at, who: 'donor' }], mode).run().check(`${mode}, donor crash at ${at}`);
  }
});
