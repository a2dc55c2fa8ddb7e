import type { Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';

// What a replica-set member's commands wait for around their run (MongoDB's service entry point:
// waitForReadConcern before, waitForWriteConcern after). A node without --replSet has none, and its
// commands wait only for their own commits.
export interface ReplicationWaits {
  // Before anything runs: the command's write concern parsed, so a bad one writes nothing.
  checkWriteConcern(commandName: string, cmd: Doc): void;
  // Before a read: what it must wait for (a secondary applying up to afterClusterTime, a commit
  // point reaching it) and, asked once that is over, the time a majority read reads at; undefined
  // when it reads as any read.
  beforeRead(commandName: string, cmd: Doc): { wait: Promise<void> | undefined; readAt: (() => Timestamp) | undefined } | undefined;
  // Before a snapshot read at `at` outside a transaction: until the commit point reaches it, as
  // MongoDB's snapshot reads read majority-committed data only. A primary whose oplog ends before
  // `at` writes a no-op first, or an idle set's commit point would never get there.
  beforeSnapshotRead(at: Timestamp): Promise<void> | undefined;
  // After the command: its reply once its write concern is met, or with the writeConcernError that
  // waiting for it gave. `lastOp` is the commit time and term of the last write it made.
  afterCommand(commandName: string, cmd: Doc, reply: Doc, lastOp: { ts: Timestamp | undefined; term: number | undefined }): Doc | Promise<Doc>;
  // What the member has written so far (its own writes outside commands among them), once a
  // majority has it: a primary-only service's state document before it acts on it. Rejects with
  // the write concern error that ended the wait (a step-down, a shutdown).
  awaitMajority(): Promise<void>;
  // At shutdown: every wait ends (ShutdownInProgress).
  stop(): void;
}

// The commands that take a writeConcern and wait for it (MongoDB's supportsWriteConcern):
// coordinateCommitTransaction with a router's client's, for a commit over several shards.
export const WRITE_CONCERN_COMMANDS: ReadonlySet<string> = new Set([
  'insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'create', 'drop', 'dropDatabase', 'createIndexes', 'dropIndexes',
  'deleteIndexes', 'collMod', 'renameCollection', 'commitTransaction', 'abortTransaction', 'coordinateCommitTransaction', 'prepareTransaction', 'applyOps',
  'createUser', 'updateUser', 'dropUser', 'dropAllUsersFromDatabase', 'createRole', 'updateRole', 'dropRole', 'grantRolesToUser', 'revokeRolesFromUser',
]);
