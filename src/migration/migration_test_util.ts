import assert from 'node:assert/strict';
import { ObjectId, Timestamp, UUID } from 'bson';
import { MinKey } from '../bson/values.js';
import { chunkVersion } from '../catalog/chunk_version.js';
import type { DonorEffect } from './donor_effects.js';
import type { MigrationCoordinatorDocument, MigrationDecision } from './migration_coordinator_document.js';

// Shared by the migration tests: a coordinator document and the donor's ordering contract as
// a checker over the effects of one donor incarnation, in order (what its machine asked for, or
// what its driver ran).

export function coordinatorDoc(over: Partial<MigrationCoordinatorDocument> = {}): MigrationCoordinatorDocument {
  return {
    _id: new UUID('11111111-2222-4333-8444-555555555555'),
    nss: 'db.c',
    collectionUuid: new UUID('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'),
    donorShardId: 's0',
    recipientShardId: 's1',
    range: { min: { a: new MinKey() }, max: { a: 100 } },
    preMigrationChunkVersion: chunkVersion(new ObjectId('65a000000000000000000001'), new Timestamp({ t: 50, i: 0 }), 3, 0),
    ...over,
  };
}

// Effects that act on a decision: none may run before the decision is on disk.
const ACTING: ReadonlySet<DonorEffect['type']> = new Set([
  'refreshFilteringMetadata',
  'exitCriticalSection',
  'markRangeDeletionReady',
  'deleteRangeDeletionTask',
  'sendRecvChunkAbort',
  'markRecipientRangeDeletionReady',
  'deleteRecipientRangeDeletionTask',
  'deleteCoordinatorDoc',
]);

const SENDS: ReadonlySet<DonorEffect['type']> = new Set(['sendRecvChunkStart', 'pollRecvChunkStatus', 'sendRecvChunkCommit', 'sendCommitToConfig']);

// `recovered`: the incarnation began from a persisted document (with its decision, if any).
export function checkDonorOrdering(log: readonly DonorEffect[], recovered?: { decision: MigrationDecision | undefined }): void {
  const types = log.map((e) => e.type);
  const at = (t: DonorEffect['type']) => types.indexOf(t);
  if (recovered === undefined) {
    const firstSend = types.findIndex((t) => SENDS.has(t));
    if (firstSend >= 0) {
      assert.ok(at('persistCoordinatorDoc') >= 0 && at('persistCoordinatorDoc') < firstSend, `coordinator document persisted before ${types[firstSend]}: ${types.join(', ')}`);
      assert.ok(at('persistRangeDeletionTask') >= 0 && at('persistRangeDeletionTask') < firstSend, `range deletion task persisted before ${types[firstSend]}: ${types.join(', ')}`);
    }
  } else {
    assert.equal(at('persistCoordinatorDoc'), -1, 'a recovered donor does not start a migration');
  }
  const persisted = log.find((e) => e.type === 'persistDecision');
  const decision = persisted?.type === 'persistDecision' ? persisted.decision : recovered?.decision;
  const decidedAt = recovered?.decision !== undefined ? -1 : at('persistDecision');
  types.forEach((t, i) => {
    if (ACTING.has(t)) assert.ok(decision !== undefined && decidedAt < i, `${t} acts on a decision persisted before it: ${types.join(', ')}`);
  });
  assert.ok(types.filter((t) => t === 'persistDecision').length <= 1, 'one decision per migration');
  if (decision === undefined) return;
  if (at('refreshFilteringMetadata') >= 0 && at('exitCriticalSection') >= 0) {
    assert.ok(at('refreshFilteringMetadata') < at('exitCriticalSection'), 'refresh before writes are let through');
  }
  if (decision === 'committed') {
    assert.equal(at('markRecipientRangeDeletionReady'), -1, 'a commit never frees the recipient\'s copy');
    assert.equal(at('deleteRangeDeletionTask'), -1, 'a commit keeps the donor\'s task');
  } else {
    assert.equal(at('deleteRecipientRangeDeletionTask'), -1, 'an abort keeps the recipient\'s task');
    assert.equal(at('markRangeDeletionReady'), -1, 'an abort never frees the donor\'s copy');
    if (at('markRecipientRangeDeletionReady') >= 0) assert.ok(at('sendRecvChunkAbort') < at('markRecipientRangeDeletionReady'), 'the recipient stops before its range is deleted');
  }
  const forget = at('deleteCoordinatorDoc');
  if (forget >= 0) assert.ok(types.slice(forget + 1).every((t) => t === 'awaitRangeDeletion'), `the document is forgotten last: ${types.join(', ')}`);
}
